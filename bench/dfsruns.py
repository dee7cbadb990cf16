"""The tables of bench/dfs-compare.sh: smarth's whole `fs` commands against HDFS's FsShell.

runs.log has one line per timed command:

    SIDE CMD round=R wall=S cpu=S server_cpu=S sync=S load=L

SIDE is smarth, hdfs or local (cp); CMD is put, cat, get or cp, and for smarth also cat_tcp:
its cat with short-circuit local reads off (SMARTH_SHORT_CIRCUIT_READS=false), every byte over
the data port as HDFS's cat without libhadoop. Rounds ran interleaved, so
round R of one side is paired with round R of the other and each pair gives one ratio; the
summary is the geometric mean of those ratios with a 95% t interval over rounds
(nnruns.ratio_interval). Only rounds that have both commands count.
"""
import re
import statistics as st

from nnruns import ratio_interval

LINE = re.compile(r'(\w+) (\w+) round=(\d+) (.*)')


def load(lines):
    """{(side, cmd): {round: {field: float}}} from runs.log's lines (others are ignored)."""
    rows = {}
    for line in lines:
        m = LINE.match(line.strip())
        if not m:
            continue
        side, cmd, r, rest = m.groups()
        fields = {k: float(v) for k, v in (x.split('=', 1) for x in rest.split() if '=' in x)}
        rows.setdefault((side, cmd), {})[int(r)] = fields
    return rows


def paired(rows, base, new, field='wall'):
    """The field of base and new in the rounds both have, in round order."""
    b, n = rows.get(base, {}), rows.get(new, {})
    rounds = sorted(set(b) & set(n))
    return [b[r][field] for r in rounds], [n[r][field] for r in rounds]


def rate_interval(seconds, size):
    """Per-round rates size/seconds (GB/s, 1e9 bytes), their geometric mean and 95% interval."""
    return ratio_interval([s * 1e9 for s in seconds], [size] * len(seconds))


# (title, numerator, denominator, target): each ratio is numerator time / denominator time, so a
# speedup puts the slower (HDFS) side on top and a cost puts smarth's get on top.
RATIOS = (
    ('put speedup: HDFS -put s / smarth fs put s', ('hdfs', 'put'), ('smarth', 'put'), 'at least 5x'),
    ('cat speedup: HDFS -cat s / smarth fs cat s', ('hdfs', 'cat'), ('smarth', 'cat'), 'at least 4x'),
    ('cat speedup, both over TCP: HDFS -cat s / smarth fs cat s without short-circuit reads',
     ('hdfs', 'cat'), ('smarth', 'cat_tcp'), '-'),
    ('smarth fs get s / cp s', ('smarth', 'get'), ('local', 'cp'), 'at most 1.20'),
    ('HDFS -get s / cp s', ('hdfs', 'get'), ('local', 'cp'), '-'),
)


def report(rows, size):
    """The summary tables as markdown lines."""
    out = ['| ratio | geometric mean over rounds [95% interval] | per-round ratios | target (issue 27) |',
           '|---|---|---|---|']
    for title, num, den, target in RATIOS:
        d, n = paired(rows, den, num)
        if not d:
            out.append(f'| {title} | no paired rounds | | {target} |')
            continue
        ratios, g, lo, hi = ratio_interval(d, n)
        out.append(f'| {title} | {g:.2f} [{lo:.2f}, {hi:.2f}] | {" ".join(f"{x:.2f}" for x in ratios)} | {target} |')
    cat = [f['wall'] for _, f in sorted(rows.get(('smarth', 'cat'), {}).items())]
    if cat:
        rates, g, lo, hi = rate_interval(cat, size)
        out.append(f'| smarth fs cat GB/s (1e9 bytes) | {g:.2f} [{lo:.2f}, {hi:.2f}] '
                   f'| {" ".join(f"{x:.2f}" for x in rates)} | at least 1 GB/s |')
    out += ['', '| side | command | rounds | wall s (median) | client CPU s (median) | servers\' CPU s (median) '
            '| sync after s (median) | load average (median) |', '|---|---|---|---|---|---|---|---|']
    for (side, cmd), rs in sorted(rows.items()):
        f = lambda k: st.median(x.get(k, float('nan')) for x in rs.values())
        out.append(f'| {side} | {cmd} | {len(rs)} | {f("wall"):.2f} | {f("cpu"):.2f} | {f("server_cpu"):.2f} '
                   f'| {f("sync"):.2f} | {f("load"):.1f} |')
    return out


if __name__ == '__main__':
    import sys
    if len(sys.argv) != 3:
        sys.exit('usage: dfsruns.py RUNS_LOG SIZE_BYTES')
    with open(sys.argv[1]) as f:
        print('\n'.join(report(load(f), int(sys.argv[2]))))
