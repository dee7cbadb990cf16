"""Reading and summarising the runs.log of bench/nn-transports.sh and bench/nn-editlog.sh.

Each line is "VARIANT T=THREADS key=value ...", with the ops/s of mkdir, create, stat,
rename and delete among the keys.
"""
import re
import statistics as st

OPS = ('mkdir', 'create', 'stat', 'rename', 'delete')


def load(path):
    """Rows by (threads, variant): one dict of key=value fields per invocation."""
    rows = {}
    for line in open(path):
        m = re.match(r'(\w+) T=(\d+) (.*)', line.strip())
        if m:
            variant, t, rest = m.groups()
            rows.setdefault((int(t), variant), []).append(dict(x.split('=') for x in rest.split() if '=' in x))
    return rows


def ratio_table(rows, base, new, base_title, new_title):
    """Prints each op's median ops/s of base and new, their ratio, and every round."""
    print(f'| threads | op | {base_title} median ops/s | {new_title} median ops/s | {new_title} / {base_title} '
          f'| {base_title} rounds | {new_title} rounds |')
    print('|---|---|---|---|---|---|---|')
    for t in (8, 64):
        for op in OPS:
            b = [int(r[op]) for r in rows[(t, base)]]
            n = [int(r[op]) for r in rows[(t, new)]]
            print(f'| {t} | {op} | {st.median(b):,.0f} | {st.median(n):,.0f} | {st.median(n)/st.median(b):.2f}x '
                  f'| {" ".join(map(str, b))} | {" ".join(map(str, n))} |')
