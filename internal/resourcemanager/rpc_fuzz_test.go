package resourcemanager

import (
	"context"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"smarth/internal/auth"
	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
)

// FuzzRPC sends arbitrary protobuf requests (decoded into each method's
// request type, as gRPC would) to every method of the resource manager,
// as one of three users and to one resource manager over many calls, so
// that calls meet the jobs and nodes earlier ones made. The resource
// manager's gRPC server has no panic recovery: a handler panic would end
// the daemon, so none may panic; none may hang past its deadline; and
// the resource manager must still answer the next call.
func FuzzRPC(f *testing.F) {
	lfs, err := mapreduce.NewLocalFS(filepath.Join(f.TempDir(), "dfs"))
	if err != nil {
		f.Fatal(err)
	}
	cfg := DefaultConfig()
	// Secure, so heartbeats meet the node-manager checks (hdfs and alice
	// are node-manager users, bob is not), with callers taken from the
	// asserted user so the fuzzer can pick them.
	cfg.Auth, cfg.Identify, cfg.NodeManagerUsers = auth.Secure, AssertedUser, []string{"hdfs", "alice"}
	cfg.FS, cfg.Scheduler, cfg.MaxFetchFailures = lfs, "fifo", 2
	cfg.GroupsOf = func(name string) ([]string, error) { return []string{name}, nil }
	mk := func() *ResourceManager {
		rm, err := New(cfg, nil)
		if err != nil {
			panic(err)
		}
		return rm
	}
	rm := mk()
	f.Cleanup(func() { rm.Close() })
	iface := reflect.TypeFor[mrpb.ResourceManagerServer]()
	var methods []reflect.Method
	index := map[string]int{}
	for i := 0; i < iface.NumMethod(); i++ {
		if m := iface.Method(i); m.IsExported() && m.Type.NumIn() == 2 {
			index[m.Name] = len(methods)
			methods = append(methods, m)
		}
	}
	add := func(method string, who uint8, m proto.Message) {
		i, ok := index[method]
		if !ok {
			f.Fatalf("no method %s", method)
		}
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint16(i), who, b)
	}
	split := &mrpb.Split{Index: 0, Path: "/in", Length: 10}
	add("SubmitJob", 1, &mrpb.SubmitJobRequest{App: "wordcount", Output: "/out", NumReduces: 2, Splits: []*mrpb.Split{split, split},
		Params: map[string]string{"input": "/in", "output": "/out"}})
	add("SubmitJob", 2, &mrpb.SubmitJobRequest{App: "wordcount", Output: "/", NumReduces: -1})
	add("SubmitJob", 1, &mrpb.SubmitJobRequest{App: "wordcount", Output: "/out2", NumReduces: 1 << 30, Splits: []*mrpb.Split{{Index: -5, Length: -1}}})
	add("GetJob", 1, &mrpb.GetJobRequest{JobId: "job_1_0001"})
	add("ListJobs", 2, &mrpb.ListJobsRequest{})
	add("KillJob", 2, &mrpb.KillJobRequest{JobId: "job_1_0001"})
	add("Heartbeat", 0, &mrpb.HeartbeatRequest{NodeId: "nm1", Hostname: "h1", MapSlots: 2, ReduceSlots: 2, FreeMapSlots: 2, FreeReduceSlots: 2})
	add("Heartbeat", 0, &mrpb.HeartbeatRequest{NodeId: "nm1", Tasks: []*mrpb.TaskReport{{JobId: "job_1_0001", AttemptId: "attempt_x", IsMap: true, State: mrpb.TaskState_TASK_SUCCEEDED}}})
	add("Heartbeat", 2, &mrpb.HeartbeatRequest{NodeId: "nm2", MapSlots: 2, FreeMapSlots: 2})
	add("Heartbeat", 1, &mrpb.HeartbeatRequest{NodeId: "nm1", ShuffleAddr: "10.0.0.1:1", MapSlots: 2, FreeMapSlots: 2})
	add("GetMapOutputs", 1, &mrpb.GetMapOutputsRequest{JobId: "job_1_0001", AttemptId: "a", Known: -7, WaitMs: 1 << 30})
	calls := 0
	users := []string{"hdfs", "alice", "bob"}
	f.Fuzz(func(t *testing.T, which uint16, who uint8, b []byte) {
		if calls++; calls%5000 == 0 { // keep the state, and every call, small
			rm.Close()
			rm = mk()
		}
		m := methods[int(which)%len(methods)]
		req := reflect.New(m.Type.In(1).Elem()).Interface().(proto.Message)
		if err := proto.Unmarshal(b, req); err != nil {
			return // gRPC refuses it before any handler
		}
		rmCall(t, rm, m, users[int(who)%3], req)
		rmCall(t, rm, methods[index["ListJobs"]], "hdfs", &mrpb.ListJobsRequest{})
	})
}

// rmCall runs one method as user with a 2-second deadline and fails the
// test if it does not return within 10 seconds.
func rmCall(t *testing.T, rm *ResourceManager, m reflect.Method, user string, req proto.Message) {
	ctx, cancel := context.WithTimeout(asUser(user), 2*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		reflect.ValueOf(rm).MethodByName(m.Name).Call([]reflect.Value{reflect.ValueOf(ctx), reflect.ValueOf(req)})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s %v hung; goroutines:\n%s", m.Name, req, buf[:runtime.Stack(buf, true)])
	}
}
