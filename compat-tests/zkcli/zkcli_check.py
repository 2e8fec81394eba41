#!/usr/bin/python3
"""A scripted zkCli.sh session against one ZooKeeper server, checked step by step.

Usage: /usr/bin/python3 zkcli_check.py [-update] HOST:PORT

expected.txt (next to this file) holds the script: each "> command" line is
sent to `zkCli.sh -server HOST:PORT` on stdin, followed by the output it must
print, normalized (zxids, times and session ids masked). Between two commands
the script sends a marker, `stat /zkcli-step-N`, whose "Node does not exist"
line splits the output into one block per command. Prints PASS/FAIL per
command and exits 1 on any failure, 2 when zkCli could not run at all.
-update rewrites expected.txt from this server's answers (use it only against
Apache ZooKeeper, then review the diff).
"""

import os
import re
import subprocess
import sys

ZKCLI = "/usr/share/zookeeper/bin/zkCli.sh"
HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTED = os.path.join(HERE, "expected.txt")
TIMEOUT = 90  # seconds for the whole session

MARK = "Node does not exist: /zkcli-step-"


def load():
    steps = []  # [command, [expected lines]]
    with open(EXPECTED) as f:
        for line in f.read().splitlines():
            if line.startswith("#") and not steps:
                continue
            if line.startswith("> "):
                steps.append([line[2:], []])
            elif steps:
                steps[-1][1].append(line)
    for s in steps:
        while s[1] and s[1][-1] == "":
            s[1].pop()
    return steps


def normalize(line):
    line = re.sub(r"^(cZxid|mZxid|pZxid) = 0x[0-9a-f]+$", r"\1 = 0xZXID", line)
    line = re.sub(r"^(ctime|mtime) = .*$", r"\1 = TIME", line)
    line = re.sub(r"^ephemeralOwner = 0x[0-9a-f]*[1-9a-f][0-9a-f]*$", "ephemeralOwner = 0xSESSION", line)
    return line


def split(stdout_and_err, n):
    """Blocks of output per step, keyed by step index."""
    blocks = {}
    cur = None
    for raw in stdout_and_err.splitlines():
        if raw.startswith("SLF4J:"):
            continue
        if raw.startswith(MARK):
            tag = raw[len(MARK):].strip()
            cur = n if tag == "end" else int(tag)
            blocks[cur] = []
            continue
        if cur is not None and cur < n:
            blocks[cur].append(normalize(raw))
    for k in blocks:
        while blocks[k] and blocks[k][-1] == "":
            blocks[k].pop()
    return blocks


def main():
    args = sys.argv[1:]
    update = False
    if args and args[0] == "-update":
        update, args = True, args[1:]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    if not os.path.exists(ZKCLI):
        print("FAIL zkcli: %s missing: `make compat` installs it (apt-get install zookeeper)" % ZKCLI)
        return 2
    steps = load()
    rc, text = run(args[0], [c for c, _ in steps])
    blocks = split(text, len(steps))
    if rc == 124 or rc == 137:
        print("FAIL zkcli: session did not finish within %ds" % TIMEOUT)
    if update:
        with open(EXPECTED, "w") as f:
            f.write("# zkCli.sh script and its expected output; regenerate with\n")
            f.write("# zkcli_check.py -update HOST:PORT against Apache ZooKeeper and review the diff.\n")
            for i, (c, _) in enumerate(steps):
                f.write("> %s\n" % c)
                for l in blocks.get(i, ["(no output block: marker missing)"]):
                    f.write(l + "\n")
        print("rewrote %s" % EXPECTED)
        return 0
    failed = 0
    for i, (c, want) in enumerate(steps):
        got = blocks.get(i)
        if got is None:
            ok = False
            got = ["(no output block: marker line missing)"]
        elif c.startswith("ls -R"):
            ok = sorted(got) == sorted(want)
        else:
            ok = got == want
        if ok:
            print("PASS %s" % c)
        else:
            failed += 1
            print("FAIL %s" % c)
            for l in want:
                print("      want: %s" % l)
            for l in got:
                print("      got:  %s" % l)
    if len(steps) not in blocks:
        failed += 1
        print("FAIL zkcli: the session ended early (no end marker); exit %d" % rc)
    print("zkcli: %d steps, %d failed" % (len(steps), failed))
    return 1 if failed else 0


def run(hostport, commands):
    """Runs the session with stderr merged into stdout, so that results and
    markers keep their order."""
    lines = []
    for i, c in enumerate(commands):
        lines.append("stat /zkcli-step-%d" % i)
        lines.append(c)
    lines.append("stat /zkcli-step-end")
    lines.append("quit")
    env = dict(os.environ, CLIENT_JVMFLAGS="-Xmx256m")
    p = subprocess.run(["timeout", "-k", "5", str(TIMEOUT), ZKCLI, "-server", hostport],
                       input="\n".join(lines) + "\n", stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env=env)
    return p.returncode, p.stdout


if __name__ == "__main__":
    sys.exit(main())
