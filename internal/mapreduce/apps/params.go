package apps

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"smarth/internal/mapreduce"
	"smarth/internal/units"
)

// Parameter names every app shares with the runtime: the job client passes
// --input/--output/--reduces through them.
const (
	ParamInput   = "input"   // comma-separated input paths
	ParamOutput  = "output"  // output directory
	ParamReduces = "reduces" // number of reduce tasks
)

// common parameters, appended to an app's own.
var (
	inputParam   = mapreduce.Param{Name: ParamInput, Help: "input path(s), comma-separated"}
	outputParam  = mapreduce.Param{Name: ParamOutput, Help: "output directory (must not exist)"}
	reducesParam = func(def int) mapreduce.Param {
		return mapreduce.Param{Name: ParamReduces, Default: strconv.Itoa(def), Help: "number of reduce tasks"}
	}
)

// params is an app's view of the user's parameters with its defaults
// filled in. Errors name the parameter, so a typo fails before anything
// runs.
type params map[string]string

// withDefaults copies given and fills in the defaults of spec. The copy is
// what the job carries, so tasks see the same values as the client.
func withDefaults(spec []mapreduce.Param, given map[string]string) params {
	p := make(params, len(given)+len(spec))
	for k, v := range given {
		p[k] = v
	}
	for _, s := range spec {
		if _, ok := p[s.Name]; !ok && s.Default != "" {
			p[s.Name] = s.Default
		}
	}
	return p
}

func (p params) str(name string) string { return strings.TrimSpace(p[name]) }

func (p params) required(name string) (string, error) {
	v := p.str(name)
	if v == "" {
		return "", paramErr("missing required parameter --%s", name)
	}
	return v, nil
}

// int parses an integer parameter within [lo, hi].
func (p params) int(name string, lo, hi int64) (int64, error) {
	s := p.str(name)
	if s == "" {
		return 0, paramErr("missing required parameter --%s", name)
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil {
		return 0, paramErr("parameter --%s=%q: not an integer", name, s)
	}
	if v < lo || v > hi {
		return 0, paramErr("parameter --%s=%d: must be between %d and %d", name, v, lo, hi)
	}
	return v, nil
}

func (p params) float(name string, lo, hi float64) (float64, error) {
	s := p.str(name)
	if s == "" {
		return 0, paramErr("missing required parameter --%s", name)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return 0, paramErr("parameter --%s=%q: not a number", name, s)
	}
	if v < lo || v > hi {
		return 0, paramErr("parameter --%s=%g: must be between %g and %g", name, v, lo, hi)
	}
	return v, nil
}

// size parses a byte size parameter (units.ParseSizeIn: "1048576",
// "64MiB", "1GB", "10k"; every prefix a power of 1024, as Hadoop's
// TestDFSIO and RandomTextWriter read them) where a bare number counts in
// unit.
func (p params) size(name string, unit, lo, hi int64) (int64, error) {
	s := p.str(name)
	if s == "" {
		return 0, paramErr("missing required parameter --%s", name)
	}
	v, err := units.ParseSizeIn(s, unit)
	if err != nil {
		return 0, paramErr("parameter --%s: %v", name, err)
	}
	if v < lo || v > hi {
		return 0, paramErr("parameter --%s=%s: must be between %d and %d bytes", name, s, lo, hi)
	}
	return v, nil
}

// inputs splits the comma-separated input parameter.
func (p params) inputs() ([]string, error) {
	s, err := p.required(ParamInput)
	if err != nil {
		return nil, err
	}
	return mapreduce.SplitPaths(s), nil
}

// newJob starts a job for app with the common parameters: output always,
// input when withInput, reduces when defReduces >= 0 (a map-only app
// passes -1).
func newJob(app string, p params, withInput bool, defReduces int) (*mapreduce.Job, error) {
	job := &mapreduce.Job{Name: app, App: app, Params: p}
	out, err := p.required(ParamOutput)
	if err != nil {
		return nil, err
	}
	job.Output = out
	if withInput {
		if job.Input, err = p.inputs(); err != nil {
			return nil, err
		}
	}
	if defReduces >= 0 {
		if p.str(ParamReduces) == "" {
			p[ParamReduces] = strconv.Itoa(defReduces)
		}
		n, err := p.int(ParamReduces, 1, 100000)
		if err != nil {
			return nil, err
		}
		job.NumReduces = int(n)
	}
	return job, nil
}

// copyParams returns a copy of p with the given overrides, for the stages
// of a multi-job driver.
func copyParams(p map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(p)+len(kv)/2)
	for k, v := range p {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

func errParam(name, value, want string) error {
	return paramErr("parameter --%s=%q: want %s", name, value, want)
}

// mapsAndSeed reads the --maps and --seed every generator takes, with the
// same bounds for all of them.
func (p params) mapsAndSeed() (maps, seed int64, err error) {
	if maps, err = p.int("maps", 1, 100000); err != nil {
		return 0, 0, err
	}
	if seed, err = p.int("seed", -1<<62, 1<<62); err != nil {
		return 0, 0, err
	}
	return maps, seed, nil
}

// paramErr is a job parameter missing or malformed: the user's mistake,
// found before anything runs.
func paramErr(format string, a ...any) error {
	return &mapreduce.ParamError{Msg: fmt.Sprintf(format, a...)}
}
