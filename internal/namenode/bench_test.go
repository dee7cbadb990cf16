package namenode

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"smarth/internal/rpc/dfspb"
)

// Namespace throughput over real gRPC, like HDFS's NNThroughputBenchmark:
// each op is durable in the edit log (fdatasync, group commit) before it is
// acknowledged. Reports ops/s; b.N is the total number of operations.
//
//	go test ./internal/namenode -run '^$' -bench 'Create|Mkdirs|Stat|Delete' -benchtime 10000x

func benchNN(b *testing.B) (*NameNode, *rpcClient) {
	nn := startNN(b, testConfig(b))
	b.Cleanup(func() { reportSyncs(b, nn) })
	return nn, dial(b, nn.Addr(), "hdfs")
}

// reportSyncs adds the group commit figures: records per fdatasync and
// the mean fdatasync time.
func reportSyncs(b *testing.B, nn *NameNode) {
	var batch, lat dto.Metric
	if nn.metrics.syncBatch.Write(&batch) != nil || nn.metrics.syncLatency.Write(&lat) != nil {
		return
	}
	if n := batch.GetHistogram().GetSampleCount(); n > 0 {
		b.ReportMetric(batch.GetHistogram().GetSampleSum()/float64(n), "records/sync")
		b.ReportMetric(lat.GetHistogram().GetSampleSum()/float64(n)*1e3, "ms/sync")
	}
}

// runParallel spreads b.N operations over g goroutines; op gets the
// goroutine and the operation's index within it.
func runParallel(b *testing.B, g int, op func(w, i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	b.ResetTimer()
	for w := 0; w < g; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				if next.Add(1) > int64(b.N) {
					return
				}
				if err := op(w, i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	if err, _ := failed.Load().(error); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// createComplete is NNThroughputBenchmark's "create": create an empty file
// and complete it, 10 files per directory.
func createComplete(c *rpcClient, w, i int) error {
	path := fmt.Sprintf("/bench/w%d/d%d/f%d", w, i/10, i)
	client := fmt.Sprint("bench-", w)
	cr, err := c.cp.Create(c.ctx(), &dfspb.CreateRequest{Path: path, ClientName: client, CreateParent: true})
	if err != nil {
		return err
	}
	r, err := c.cp.Complete(c.ctx(), &dfspb.CompleteRequest{Path: path, ClientName: client, FileId: cr.GetStatus().GetFileId()})
	if err == nil && !r.GetCompleted() {
		err = fmt.Errorf("complete %s: not completed", path)
	}
	return err
}

func BenchmarkCreate1(b *testing.B) {
	_, c := benchNN(b)
	runParallel(b, 1, func(w, i int) error { return createComplete(c, w, i) })
}

func BenchmarkCreate8(b *testing.B) {
	_, c := benchNN(b)
	runParallel(b, 8, func(w, i int) error { return createComplete(c, w, i) })
}

func BenchmarkMkdirs8(b *testing.B) {
	_, c := benchNN(b)
	runParallel(b, 8, func(w, i int) error {
		_, err := c.cp.Mkdirs(c.ctx(), &dfspb.MkdirsRequest{Path: fmt.Sprintf("/bench/w%d/d%d/e%d", w, i/10, i), CreateParent: true})
		return err
	})
}

// BenchmarkStat8 reads back files made beforehand (not timed).
func BenchmarkStat8(b *testing.B) {
	_, c := benchNN(b)
	const files = 1000
	for i := 0; i < files; i++ {
		if err := createComplete(c, 0, i); err != nil {
			b.Fatal(err)
		}
	}
	runParallel(b, 8, func(w, i int) error {
		k := (w*7919 + i) % files
		_, err := c.cp.GetFileInfo(c.ctx(), &dfspb.GetFileInfoRequest{Path: fmt.Sprintf("/bench/w0/d%d/f%d", k/10, k)})
		return err
	})
}

// BenchmarkDelete8 deletes files made beforehand (not timed).
func BenchmarkDelete8(b *testing.B) {
	_, c := benchNN(b)
	perW := (b.N + 7) / 8
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perW; i++ {
				if err := createComplete(c, w, i); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	counters := make([]atomic.Int64, 8)
	runParallel(b, 8, func(w, _ int) error {
		i := int(counters[w].Add(1) - 1)
		if i >= perW {
			return nil
		}
		_, err := c.cp.Delete(c.ctx(), &dfspb.DeleteRequest{Path: fmt.Sprintf("/bench/w%d/d%d/f%d", w, i/10, i)})
		return err
	})
}
