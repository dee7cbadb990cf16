"""Reading and summarising the runs.log of bench/nn-transports.sh, bench/nn-editlog.sh and bench/nn-ha-compare.sh.

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


# Student's t, 97.5% quantile, by degrees of freedom (for a two-sided 95% interval).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
        18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}


def t975(df):
    return T975.get(df) or T975[max(k for k in T975 if k <= df)]


def ratio_interval(base, new):
    """Per-round ratios new[i]/base[i] (the rounds are interleaved, so round i of each ran side by
    side in time), and their geometric mean with a 95% t-interval on the log ratios."""
    import math
    ratios = [n / b for b, n in zip(base, new)]
    logs = [math.log(x) for x in ratios]
    m = st.mean(logs)
    if len(logs) < 2:
        return ratios, math.exp(m), float('nan'), float('nan')
    h = t975(len(logs) - 1) * st.stdev(logs) / math.sqrt(len(logs))
    return ratios, math.exp(m), math.exp(m - h), math.exp(m + h)


def paired_table(rows, base, new, base_title, new_title, threads=(8, 64)):
    """Each op's median ops/s of base and new, the geometric mean of the per-round ratios with its
    95% interval, and every round's ratio."""
    print(f'| threads | op | {base_title} median ops/s | {new_title} median ops/s | {new_title} / {base_title} '
          f'(per-round geometric mean, 95% interval) | per-round ratios |')
    print('|---|---|---|---|---|---|')
    for t in threads:
        if (t, base) not in rows or (t, new) not in rows:
            continue
        for op in OPS:
            b = [int(r[op]) for r in rows[(t, base)]]
            n = [int(r[op]) for r in rows[(t, new)]]
            ratios, g, lo, hi = ratio_interval(b, n)
            print(f'| {t} | {op} | {st.median(b):,.0f} | {st.median(n):,.0f} | {g:.2f}x [{lo:.2f}, {hi:.2f}] '
                  f'| {" ".join(f"{x:.2f}" for x in ratios)} |')


if __name__ == '__main__':
    import sys
    # nnruns.py ha RUNS_LOG "VARIANTS": the tables of bench/nn-ha-compare.sh.
    if len(sys.argv) != 4 or sys.argv[1] != 'ha':
        sys.exit('usage: nnruns.py ha RUNS_LOG "VARIANTS"')
    rows = load(sys.argv[2])
    have = sys.argv[3].split()
    titles = {'hdfsha': 'HDFS HA', 'hdfs': 'HDFS single', 'ha': 'smarth HA', 'single': 'smarth single TLS',
              'plain': 'smarth single', 'ha2': 'smarth HA (B2)'}
    for base, new in (('hdfsha', 'ha'), ('single', 'ha'), ('plain', 'ha'), ('hdfs', 'hdfsha'), ('plain', 'single'),
                      ('ha', 'ha2'), ('hdfsha', 'ha2')):
        if base in have and new in have:
            print(f'\n{titles[new]} against {titles[base]}:\n')
            paired_table(rows, base, new, titles[base], titles[new])
    if 'ha' in have and 'ha2' in have:
        # The same operations in both invocations of a round: the ratio of the groups' CPU seconds
        # (context switches) is the ratio of their CPU (thread wake-ups) per operation.
        for key, what in (('server_cpu', 'Server CPU seconds'), ('server_csw', 'Server context switches')):
            print(f'\n{what} per invocation, smarth HA (B2) / smarth HA, per round:\n')
            print('| threads | smarth HA median | smarth HA (B2) median | B2 / HA (geometric mean, 95% interval) '
                  '| per-round ratios | load average (median) |')
            print('|---|---|---|---|---|---|')
            for t in (8, 64):
                if (t, 'ha') not in rows or (t, 'ha2') not in rows or key not in rows[(t, 'ha')][0]:
                    continue
                b = [float(r[key]) for r in rows[(t, 'ha')]]
                n = [float(r[key]) for r in rows[(t, 'ha2')]]
                ratios, g, lo, hi = ratio_interval(b, n)
                load = st.median(float(r['load']) for r in rows[(t, 'ha')] + rows[(t, 'ha2')])
                fmt = ',.2f' if key == 'server_cpu' else ',.0f'
                print(f'| {t} | {st.median(b):{fmt}} | {st.median(n):{fmt}} | {g:.2f}x [{lo:.2f}, {hi:.2f}] '
                      f'| {" ".join(f"{x:.2f}" for x in ratios)} | {load:.1f} |')
    print('\n| threads | variant | server CPU s per invocation (median) | wall s (median) | load average (median) |')
    print('|---|---|---|---|---|')
    for (t, v), r in sorted(rows.items()):
        f = lambda k: st.median(float(x[k]) for x in r)
        print(f'| {t} | {titles.get(v, v)} | {f("server_cpu"):.2f} | {f("wall"):.1f} | {f("load"):.1f} |')
