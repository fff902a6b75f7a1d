package repo

import (
	"io"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// rawWriter plants objects byte for byte through go-git's storer: how tests make the trees
// and commits that go-git's encoders, and ckpt, would never make.
type rawWriter struct{ r *Repo }

func newRawWriter(r *Repo) *rawWriter { return &rawWriter{r} }

func (w *rawWriter) write(typ plumbing.ObjectType, data []byte) (Hash, error) {
	o := &plumbing.MemoryObject{}
	o.SetType(typ)
	_, _ = o.Write(data)
	return w.r.objects().put(o)
}

// testCommit is the bytes of a commit encoded by go-git.
func testCommit(t testing.TB, tree Hash, parents []Hash, who Signature, when time.Time, msg string) []byte {
	t.Helper()
	sig := signature(who, when)
	o, err := commitObject(tree, parents, sig, sig, msg)
	if err != nil {
		t.Fatal(err)
	}
	return mustRead(t, o)
}

func mustRead(t testing.TB, o plumbing.EncodedObject) []byte {
	t.Helper()
	rd, err := o.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	b, err := io.ReadAll(rd)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
