package store

import (
	"crypto/sha256"
	"hash"
	"io"

	"github.com/seed1cedbf7c/ckpt/internal/object"
)

// chunkWriter splits a stream into content-defined chunks and stores each.
type chunkWriter struct {
	put    func([]byte) (object.ID, error)
	commit func(id object.ID, size int64, list []byte) error
	buf    []byte
	ids    []object.ID
	sizes  []int64
	size   int64
	err    error
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.buf = append(w.buf, p...)
	w.size += int64(len(p))
	w.flush(false)
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

func (w *chunkWriter) flush(final bool) {
	for len(w.buf) > 0 && w.err == nil {
		n := chunkBoundary(w.buf, final)
		if n < 0 {
			break
		}
		id, err := w.put(w.buf[:n])
		if err != nil {
			w.err = err
			return
		}
		w.ids = append(w.ids, id)
		w.sizes = append(w.sizes, int64(n))
		w.buf = append(w.buf[:0], w.buf[n:]...)
	}
}

func (w *chunkWriter) Commit(id object.ID) error {
	w.flush(true)
	if w.err != nil {
		return w.err
	}
	return w.commit(id, w.size, encodeChunkList(w.ids, w.sizes))
}

func (w *chunkWriter) Abort() { w.buf = nil; w.err = io.ErrClosedPipe }

// chunkReader streams a chunked blob, verifying each chunk and the whole.
type chunkReader struct {
	id    object.ID
	size  int64
	ids   []object.ID
	sizes []int64
	read  func(object.ID) ([]byte, error)
	cur   []byte
	next  int
	h     hash.Hash
	n     int64
	err   error
}

func newChunkReader(id object.ID, size int64, ids []object.ID, sizes []int64, read func(object.ID) ([]byte, error)) *chunkReader {
	return &chunkReader{id: id, size: size, ids: ids, sizes: sizes, read: read, h: sha256.New()}
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	for len(r.cur) == 0 {
		if r.next == len(r.ids) {
			var got object.ID
			r.h.Sum(got[:0])
			if r.n != r.size || got != r.id {
				r.err = &CorruptError{Kind: "blob", ID: r.id, Detail: "content does not match its hash"}
				return 0, r.err
			}
			r.err = io.EOF
			return 0, io.EOF
		}
		c, err := r.read(r.ids[r.next])
		if err != nil {
			r.err = blobCorrupt(r.id, err)
			return 0, r.err
		}
		if int64(len(c)) != r.sizes[r.next] {
			r.err = &CorruptError{Kind: "blob", ID: r.id, Detail: "chunk size mismatch"}
			return 0, r.err
		}
		r.next++
		r.cur = c
		r.h.Write(c)
		r.n += int64(len(c))
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

func (r *chunkReader) Close() error { return nil }
