package demo

import (
	"bufio"
	"context"
	"fmt"
	"strconv"
	"strings"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
)

// ClusterWordCount runs the built-in wordcount app on the cluster's
// resource manager through the job client, then reads its part files and
// returns the top words.
func ClusterWordCount(ctx context.Context, st *cluster.State, input, output string, top int) ([]WordCountEntry, error) {
	sec, err := st.Security()
	if err != nil {
		return nil, err
	}
	dfs, err := client.New(client.Config{NameNode: st.NameNode, TokenFile: sec.TokenFile, TLS: sec.TLS})
	if err != nil {
		return nil, err
	}
	defer dfs.Close()
	jc, err := jobclient.New(jobclient.Config{
		ResourceManager: st.ResourceManager,
		FS:              mapreduce.DFS(dfs),
		Registry:        mapreduce.NewRegistry(apps.All()...),
		TokenFile:       sec.TokenFile,
		TLS:             sec.TLS,
	})
	if err != nil {
		return nil, err
	}
	defer jc.Close()
	res, err := jc.Run(ctx, "wordcount", map[string]string{
		apps.ParamInput: input, apps.ParamOutput: output, apps.ParamReduces: "2",
	})
	if err != nil {
		return nil, err
	}
	if res.State != mapreduce.StateSucceeded {
		return nil, fmt.Errorf("job %s %s: %s", res.JobID, res.State, res.Error)
	}
	counts, err := readCounts(ctx, dfs, output)
	if err != nil {
		return nil, err
	}
	return topWords(counts, top), nil
}

// readCounts reads "word<TAB>count" lines from every part file of dir.
func readCounts(ctx context.Context, dfs *client.FileSystem, dir string) (map[string]int64, error) {
	files, err := dfs.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, f := range files {
		if f.IsDir || !strings.HasPrefix(f.Name, "part-") {
			continue
		}
		r, err := dfs.Open(ctx, f.Path)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			w, c, ok := strings.Cut(sc.Text(), "\t")
			n, err := strconv.ParseInt(c, 10, 64)
			if !ok || err != nil {
				r.Close()
				return nil, fmt.Errorf("%s: unexpected line %q", f.Path, sc.Text())
			}
			counts[w] += n
		}
		r.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return counts, nil
}
