package ipc

import (
	"bufio"
	"errors"
	"net"
	"runtime"
	"sync"
)

// frameWriter sends the frames of one connection. Whoever queues a frame
// while no one is writing becomes the writer: it writes everything queued,
// and frames queued meanwhile by others (the replies of one group commit,
// the calls of many client goroutines) go out together in its next write,
// one system call for the lot. Compared with a dedicated writer goroutine
// (gRPC's loopy writer) no goroutine is woken per batch; the cost is that
// the one writing waits for the socket.
type frameWriter struct {
	nc net.Conn

	mu      sync.Mutex // guards the fields below
	queue   []*[]byte
	spare   []*[]byte
	writing bool
	err     error // the first write error, or errGoAway; later sends fail with it
	// closeAfter: close the write side once the queue is written.
	closeAfter bool

	bw *bufio.Writer // used only by the goroutine that is writing
	// onError runs once, outside mu, after the first write error.
	onError func(error)
}

func newFrameWriter(nc net.Conn, onError func(error)) *frameWriter {
	return &frameWriter{nc: nc, bw: bufio.NewWriterSize(nc, 32<<10), onError: onError}
}

// send queues frame (taking ownership: it goes back to the pool once
// written) and writes the queue unless another goroutine is writing it.
// An error means the connection is broken; a nil error does not promise
// delivery (the goroutine writing may still fail), which is why the client
// fails every pending call when a connection breaks.
func (w *frameWriter) send(frame *[]byte) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		putBuf(frame)
		return err
	}
	w.queue = append(w.queue, frame)
	if w.writing {
		w.mu.Unlock()
		return nil
	}
	w.writing = true
	// Yield once before the first write, as gRPC's loopy writer does
	// before flushing a small batch: goroutines made runnable together
	// with this one (the handlers released by one group commit, client
	// goroutines woken by one batch of replies) queue their frames
	// meanwhile and go out in the same write.
	w.mu.Unlock()
	runtime.Gosched()
	w.mu.Lock()
	for {
		batch := w.queue
		w.queue = w.spare[:0]
		w.mu.Unlock()
		err := w.write(batch)
		w.mu.Lock()
		w.spare = batch[:0]
		if err != nil {
			w.err = err
			for _, b := range w.queue {
				putBuf(b)
			}
			w.queue = nil
			w.writing = false
			w.mu.Unlock()
			w.onError(err)
			return err
		}
		if len(w.queue) == 0 {
			w.writing = false
			closeNow := w.closeAfter
			w.mu.Unlock()
			if closeNow {
				closeWrite(w.nc)
			}
			return nil
		}
	}
}

// errGoAway: the server asked this connection to go away; the frame was
// not sent and can go on a new connection.
var errGoAway = errors.New("ipc: connection going away")

// closeWrite lets the frames queued so far go out, refuses later ones
// with errGoAway, then closes the connection's write side so the server
// reads an end of stream after the last call.
func (w *frameWriter) closeWrite() {
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return
	}
	w.err = errGoAway
	if w.writing {
		w.closeAfter = true // the writer closes when it has written the queue
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	closeWrite(w.nc)
}

func closeWrite(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	// Otherwise the server's read deadline ends the connection.
}

func (w *frameWriter) write(batch []*[]byte) error {
	var err error
	for i, b := range batch {
		if err == nil {
			_, err = w.bw.Write(*b)
		}
		putBuf(b)
		batch[i] = nil
	}
	if err == nil {
		err = w.bw.Flush()
	}
	return err
}
