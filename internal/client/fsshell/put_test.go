package fsshell_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"

	"smarth/internal/client"
	"smarth/internal/client/fsshell"
)

// TestPutWritesUnderACopyingName: while a put runs, its bytes are under
// DEST._COPYING_ and nothing is under DEST; a put that fails midway (its
// source breaks, as a Ctrl-C'd pipe would) leaves neither. The same put
// completed is the control: DEST holds the bytes and the temporary is
// gone.
func TestPutWritesUnderACopyingName(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for _, breaks := range []bool{true, false} {
		dst := "/up/broken"
		if !breaks {
			dst = "/up/whole"
		}
		pr, pw := io.Pipe()
		e.sh.Stdin = pr
		errc := make(chan error, 1)
		go func() { errc <- e.sh.Put(ctx, []string{"-"}, dst, fsshell.PutOptions{}) }()
		if _, err := pw.Write(chunk); err != nil { // taken by the put: it is mid-copy now
			t.Fatal(err)
		}
		e.c.WaitFor(t, dst+"._COPYING_ to appear", func() bool {
			_, err := e.sh.FS.Stat(ctx, dst+"._COPYING_")
			return err == nil
		})
		if _, err := e.sh.FS.Stat(ctx, dst); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s during the put: stat %v; want no file under the final name", dst, err)
		}
		if breaks {
			pw.CloseWithError(errors.New("interrupted"))
		} else {
			pw.Write(chunk)
			pw.Close()
		}
		err := <-errc
		_, dstErr := e.sh.FS.Stat(ctx, dst)
		_, tmpErr := e.sh.FS.Stat(ctx, dst+"._COPYING_")
		if !errors.Is(tmpErr, fs.ErrNotExist) {
			t.Errorf("%s: the temporary file stayed (stat %v)", dst, tmpErr)
		}
		if breaks && (err == nil || !errors.Is(dstErr, fs.ErrNotExist)) {
			t.Errorf("broken put: %v, stat of %s %v; want an error and no file", err, dst, dstErr)
		}
		if !breaks {
			st, serr := e.sh.FS.Stat(ctx, dst)
			if err != nil || serr != nil || st.Size != 2<<20 {
				t.Errorf("control: put %v, %s stat %+v %v; want %d bytes", err, dst, st, serr, 2<<20)
			}
		}
	}
}

// TestPutFReplacesAfterAKilledPut: a put killed outright leaves its
// DEST._COPYING_ open under the dead client's lease (here a client that
// never closes it) and DEST as it was; put -f replaces DEST at once.
func TestPutFReplacesAfterAKilledPut(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.sh.Stdin = bytes.NewReader([]byte("old"))
	must(t, e.sh.Put(ctx, []string{"-"}, "/k/file", fsshell.PutOptions{}))
	dead := e.c.Client(t) // the killed put's client: it never closes its file
	w, err := dead.Create(ctx, "/k/file._COPYING_", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte("y"), 4096)); err != nil {
		t.Fatal(err)
	}
	if st, err := e.sh.FS.Stat(ctx, "/k/file"); err != nil || st.Size != 3 {
		t.Fatalf("the final name after the killed put: %+v, %v; want the old 3 bytes", st, err)
	}
	e.sh.Stdin = bytes.NewReader([]byte("new content"))
	if err := e.sh.Put(ctx, []string{"-"}, "/k/file", fsshell.PutOptions{Overwrite: true}); err != nil {
		t.Fatalf("put -f after a killed put: %v", err)
	}
	r, err := e.sh.FS.Open(ctx, "/k/file")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if b, _ := io.ReadAll(r); string(b) != "new content" {
		t.Fatalf("/k/file = %q after put -f", b)
	}
}
