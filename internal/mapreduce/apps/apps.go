package apps

import (
	"io"
	"os"

	"smarth/internal/mapreduce"
)

// Options tune the apps as a set.
type Options struct {
	// Out receives what drivers print for the user (Pi's estimate,
	// TestDFSIO's report); default os.Stdout.
	Out io.Writer
}

// All returns every built-in app; the job CLI, the local runner and the
// node managers build their registry from it.
func All() []mapreduce.App { return AllWith(Options{}) }

// AllWith returns every built-in app with the given options.
func AllWith(o Options) []mapreduce.App {
	return []mapreduce.App{
		WordCount{},
		Grep{},
		GrepCount{},
		OrderDesc{},
		Sort{},
		TeraGen{},
		TeraSort{},
		TeraValidate{},
		Pi{out: o.Out},
		PiCount{},
		RandomTextWriter{},
		TestDFSIO{out: o.Out},
		DFSIOJob{},
		HiveGen{},
		HiveTable{},
		Aggregation{},
		Join{},
		JoinVisits{},
		JoinGroup{},
		KMeans{out: o.Out},
		KMeansIter{},
		KMeansGen{},
		PageRank{out: o.Out},
		PageRankInit{},
		PageRankIter{},
		PageRankGen{},
		Streaming{},
	}
}

func writerOr(w io.Writer) io.Writer {
	if w == nil {
		return os.Stdout
	}
	return w
}
