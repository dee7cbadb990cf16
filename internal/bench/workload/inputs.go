package workload

import (
	"context"
	"fmt"
	"path"
	"strconv"

	"smarth/internal/mapreduce"
	"smarth/internal/units"
)

// Bytes per generated record, measured on the generators' output, used to
// turn an input size into a record count. The size reached is printed
// after generation; it is within a few percent of the one asked for.
const (
	uservisitBytes = 135 // hivegen uservisits row; rankings add ~5% (one per 10 visits)
	pointDims      = 8
	pointBytes     = pointDims * 9 // "%.4f" per dimension and a separator
	edgeBytes      = 12            // "src\tdst\n" with 5-digit page ids
	linksPerPage   = 5
)

// genParams is the generator app and its parameters for in at dir, with
// maps map tasks.
func genParams(in InputSpec, dir string, maps int) (string, map[string]string) {
	m := strconv.Itoa(maps)
	p := map[string]string{"output": dir, "maps": m}
	switch in.Kind {
	case KindText:
		p["bytes-per-map"] = strconv.FormatInt(in.Size/int64(maps), 10)
		return "randomtextwriter", p
	case KindHive:
		visits := in.Size / (uservisitBytes + uservisitBytes/20)
		p["visits"], p["pages"] = strconv.FormatInt(visits, 10), strconv.FormatInt(max(visits/10, 1), 10)
		return "hivegen", p
	case KindPoints:
		p["points"], p["dims"] = strconv.FormatInt(in.Size/pointBytes, 10), strconv.Itoa(pointDims)
		return "kmeansgen", p
	default: // KindGraph
		p["pages"], p["links"] = strconv.FormatInt(in.Size/(edgeBytes*linksPerPage), 10), strconv.Itoa(linksPerPage)
		return "pagerankgen", p
	}
}

// ensureInputs generates every input of w under root that is not there
// yet (inputs are reused across combinations and runs: only the cache
// state differs between them) and returns each input's path.
func ensureInputs(ctx context.Context, r mapreduce.Runner, w *Workload, root string, maps int, log func(string, ...any)) (map[string]string, error) {
	paths := map[string]string{}
	for _, name := range sortedKeys(w.Inputs) {
		in := w.Inputs[name]
		// The directory names the size, so a changed workload file
		// never reuses an input of another size.
		dir := path.Join(root, fmt.Sprintf("%s-%s-%d", name, in.Kind, in.Size))
		paths[name] = dir
		if _, err := r.FS().Stat(ctx, dir); err == nil {
			log("input %s: reusing %s", name, dir)
			continue
		}
		app, p := genParams(in, dir, maps)
		log("input %s: generating %s of %s with %s", name, units.FormatSizeExact(in.Size), in.Kind, app)
		if _, err := r.Run(ctx, app, p); err != nil {
			return nil, fmt.Errorf("generate input %s: %w", name, err)
		}
	}
	return paths, nil
}
