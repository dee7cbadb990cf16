package resourcemanager

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"smarth/internal/diskperm"
	"smarth/internal/rpc/mrpb"
)

// jobStore is the resource manager's durable job history (YARN's
// RM state store and JobHistoryServer in one): a bbolt file in
// history_dir holding, per job, its spec and last status. A job is put
// when it is submitted (so a restart finds it, and reports it lost) and
// again when it ends, with its counters, tasks, attempts (node and
// state) and diagnostics; the summaries bucket holds the status without
// tasks, which is all `job list` reads. bbolt commits each put with an
// fsync before it returns: a job reported finished to anyone is on disk.
type jobStore struct {
	db *bbolt.DB
}

var (
	bucketJobs      = []byte("jobs")      // job id -> JobHistoryRecord (full)
	bucketSummaries = []byte("summaries") // job id -> JobStatus without tasks
)

// historyFile is the store's file in history_dir.
const historyFile = "jobs.db"

func openJobStore(dir string, log *slog.Logger) (*jobStore, error) {
	if err := diskperm.MkdirAll(dir, diskperm.Dir); err != nil {
		return nil, fmt.Errorf("history_dir %s: %w", dir, err)
	}
	// What an older release or a hand-made directory left wider is
	// narrowed (bbolt keeps an existing file's mode), with a warning.
	if _, err := diskperm.Fix(dir, diskperm.Dir, log.With("key", "history_dir")); err != nil {
		return nil, fmt.Errorf("history_dir %s: %w", dir, err)
	}
	p := filepath.Join(dir, historyFile)
	// The timeout turns a second resource manager on the same directory
	// into an error naming the file rather than a hang on its lock.
	db, err := bbolt.Open(p, diskperm.File, &bbolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("history_dir: job history %s: %w", p, err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, b := range [][]byte{bucketJobs, bucketSummaries} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("history_dir: job history %s: %w", p, err)
	}
	return &jobStore{db: db}, nil
}

func (s *jobStore) close() error { return s.db.Close() }

// put records a job, replacing what was recorded of it.
func (s *jobStore) put(rec *mrpb.JobHistoryRecord) error {
	full, err := proto.Marshal(rec)
	if err != nil {
		return err
	}
	sum := proto.Clone(rec.GetStatus()).(*mrpb.JobStatus)
	sum.Tasks = nil
	short, err := proto.Marshal(sum)
	if err != nil {
		return err
	}
	id := []byte(rec.GetStatus().GetJobId())
	return s.db.Update(func(tx *bbolt.Tx) error {
		if err := tx.Bucket(bucketJobs).Put(id, full); err != nil {
			return err
		}
		return tx.Bucket(bucketSummaries).Put(id, short)
	})
}

// get is a job's record (nil when the store has none).
func (s *jobStore) get(id string) (*mrpb.JobHistoryRecord, error) {
	var rec *mrpb.JobHistoryRecord
	err := s.db.View(func(tx *bbolt.Tx) error {
		v := tx.Bucket(bucketJobs).Get([]byte(id))
		if v == nil {
			return nil
		}
		rec = &mrpb.JobHistoryRecord{}
		return proto.Unmarshal(v, rec)
	})
	if err != nil {
		return nil, fmt.Errorf("job history: %s: %w", id, err)
	}
	return rec, nil
}

// summaries are every recorded job's status without its tasks.
func (s *jobStore) summaries() ([]*mrpb.JobStatus, error) {
	var out []*mrpb.JobStatus
	err := s.db.View(func(tx *bbolt.Tx) error {
		return tx.Bucket(bucketSummaries).ForEach(func(k, v []byte) error {
			st := &mrpb.JobStatus{}
			if err := proto.Unmarshal(v, st); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
			out = append(out, st)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("job history: %w", err)
	}
	return out, nil
}

// remove forgets the jobs.
func (s *jobStore) remove(ids []string) error {
	return s.db.Update(func(tx *bbolt.Tx) error {
		for _, id := range ids {
			for _, b := range [][]byte{bucketJobs, bucketSummaries} {
				if err := tx.Bucket(b).Delete([]byte(id)); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
