"""Unit test of bench/dfsruns.py: python3 -m unittest discover -s bench -p 'dfsruns_test.py'"""
import math
import unittest

import dfsruns

LOG = """\
hdfs put round=2 wall=12 cpu=9 server_cpu=5 sync=0.1 load=5.0
smarth put round=1 wall=2 cpu=1 server_cpu=4 sync=0.1 load=3.0
smarth put round=2 wall=4 cpu=1 server_cpu=4 sync=0.1 load=5.0
hdfs put round=1 wall=10 cpu=9 server_cpu=5 sync=0.1 load=3.0
hdfs put round=3 wall=10 cpu=9 server_cpu=5 sync=0.1 load=5.0
smarth cat round=1 wall=0.5 cpu=0.2 server_cpu=0.3 sync=0 load=3.0
smarth cat round=2 wall=2 cpu=0.2 server_cpu=0.3 sync=0 load=3.0
smarth cat_tcp round=2 wall=2 cpu=0.2 server_cpu=0.3 sync=0 load=3.0
not a runs line
"""


class DfsRunsTest(unittest.TestCase):
    def setUp(self):
        self.rows = dfsruns.load(LOG.splitlines())

    def test_pairs_by_round_not_by_line_order(self):
        # HDFS's round 2 line comes first; round 3 has no smarth put and is left out.
        d, n = dfsruns.paired(self.rows, ('smarth', 'put'), ('hdfs', 'put'))
        self.assertEqual(d, [2, 4])
        self.assertEqual(n, [10, 12])

    def test_speedup_is_geometric_mean_with_t_interval(self):
        d, n = dfsruns.paired(self.rows, ('smarth', 'put'), ('hdfs', 'put'))
        ratios, g, lo, hi = dfsruns.ratio_interval(d, n)
        self.assertEqual(ratios, [5, 3])
        self.assertAlmostEqual(g, math.sqrt(15))
        # two rounds: t(0.975, 1) = 12.706, sd of the logs = |ln 5 - ln 3| / sqrt 2.
        h = 12.706 * (math.log(5 / 3) / math.sqrt(2)) / math.sqrt(2)
        self.assertAlmostEqual(lo, math.sqrt(15) * math.exp(-h))
        self.assertAlmostEqual(hi, math.sqrt(15) * math.exp(h))

    def test_rate_in_gb_per_second(self):
        rates, g, _, _ = dfsruns.rate_interval([0.5, 2], 10**9)
        self.assertEqual(rates, [2, 0.5])
        self.assertAlmostEqual(g, 1)

    def test_report_names_missing_pairs(self):
        out = '\n'.join(dfsruns.report(self.rows, 10**9))
        self.assertIn('| put speedup: HDFS -put s / smarth fs put s | 3.87 [', out)
        self.assertIn('| smarth fs get s / cp s | no paired rounds |', out)
        self.assertIn('| cat speedup, both over TCP: HDFS -cat s / smarth fs cat s without short-circuit reads | no paired rounds |', out)
        self.assertIn('| smarth fs cat GB/s (1e9 bytes) | 1.00 [', out)
        self.assertIn('| hdfs | put | 3 | 10.00 |', out)
        self.assertIn('| smarth | cat_tcp | 1 | 2.00 |', out)


if __name__ == '__main__':
    unittest.main()
