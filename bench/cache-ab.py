#!/usr/bin/env python3
"""CL-BG against CL-LRU, no cache and table-steered CL-BG from `smarth bench workload --json` files.

usage: bench/cache-ab.py FILE.json...   (one file per workload, same cache size)

Per workload and warm round (every round but the first): the geometric mean over the
workload's apps of each app's time under A over its time under B in the same round (the
rounds are interleaved, so a round is one paired sample). Per workload: the geometric mean of
those round ratios with a Student-t 95% interval over the rounds. Over all workloads: the mean
of the per-workload ratios with a t interval over the workloads (one value per workload: the
workloads are the independent samples). A failed app run makes its round pair nothing for that
app, and is counted.
"""
import json, math, sys

# Student-t 0.975 quantiles by degrees of freedom (no scipy needed).
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
        16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}

def t975(df):
    """The quantile for df, or for the nearest smaller df tabled (a wider interval)."""
    return T975[max(k for k in T975 if k <= df)]

def interval(logs):
    n = len(logs)
    m = sum(logs) / n
    if n < 2:
        return math.exp(m), float('nan'), float('nan')
    sd = math.sqrt(sum((x - m) ** 2 for x in logs) / (n - 1))
    h = t975(n - 1) * sd / math.sqrt(n)
    return math.exp(m), math.exp(m - h), math.exp(m + h)

def times(res, combo):
    for c in res['combos']:
        if c['combo']['name'] == combo:
            t, failed = {}, 0
            for a in c['apps']:
                if a.get('error'):
                    failed += 1
                    continue
                t[(a['run'], a['label'])] = a['seconds']
            return t, failed
    return None, 0

def main(files):
    # clbgtable (BG steered by Table 1, the paper's) is paired where a run has it.
    pairs = [('clbg', 'cllru'), ('clbg', 'nocache'), ('cllru', 'nocache'),
             ('clbgtable', 'cllru'), ('clbg', 'clbgtable')]
    per = {p: [] for p in pairs}
    print('| workload | pair | rounds | per-round ratio (geometric mean) [95% interval] | failed app runs A/B |')
    print('|---|---|---|---|---|')
    for f in files:
        res = json.load(open(f))
        for a, b in pairs:
            ta, fa = times(res, a)
            tb, fb = times(res, b)
            if ta is None or tb is None:
                continue
            runs = sorted({r for r, _ in ta} | {r for r, _ in tb})
            logs = []
            for r in runs:
                if r == 0:
                    continue  # cold
                apps = [l for (rr, l) in ta if rr == r and (r, l) in tb]
                if not apps:
                    continue
                logs.append(sum(math.log(ta[(r, l)] / tb[(r, l)]) for l in apps) / len(apps))
            g, lo, hi = interval(logs)
            per[(a, b)].append(math.log(g))
            print(f'| {res["workload"]} | {a}/{b} | {len(logs)} | {g:.3f} [{lo:.3f}, {hi:.3f}] | {fa}/{fb} |')
    print()
    print('| pair | workloads | mean of per-workload ratios [95% interval over workloads] |')
    print('|---|---|---|')
    for p in pairs:
        if per[p]:
            g, lo, hi = interval(per[p])
            print(f"| {p[0]}/{p[1]} | {len(per[p])} | {g:.4f} [{lo:.4f}, {hi:.4f}] |")

if __name__ == '__main__':
    main(sys.argv[1:])
