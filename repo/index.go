package repo

import (
	"bytes"
	"os"
	"path/filepath"
	"time"

	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// writeIndex writes .git/index with go-git's index encoder (which sorts the entries) for a
// flat tree whose files are on disk in workDir, with their stat data, so that `git status`
// sees a clean work tree without rehashing. onDisk, when not nil, says which entries the
// disk holds exactly; the others get no stat data, so git rehashes them and sees that they
// differ. It uses index.lock like git does, and like git it does not fsync the index: it is
// bookkeeping that no ref depends on, and a commit or restore writes it again whenever it
// does not hold main's tree (Repo.indexHolds), so a crash that loses it costs nothing.
func (st *Store) writeIndex(gitDir, workDir string, files map[string]Hash, onDisk func(name string, h Hash) bool) error {
	idx := &index.Index{Version: 2}
	for name, h := range files {
		ent := &index.Entry{Hash: h, Name: name, Mode: filemode.Regular}
		if onDisk != nil && !onDisk(name, h) {
			idx.Entries = append(idx.Entries, ent)
			continue
		}
		if fi, err := os.Lstat(filepath.Join(workDir, name)); err == nil {
			ent.ModifiedAt = fi.ModTime()
			ent.Size = uint32(fi.Size())
			if ctime, dev, ino, uid, gid, ok := statData(fi); ok {
				ent.CreatedAt, ent.Dev, ent.Inode, ent.UID, ent.GID = ctime, dev, ino, uid, gid
			}
		}
		idx.Entries = append(idx.Entries, ent)
	}
	var buf bytes.Buffer
	if err := index.NewEncoder(&buf).Encode(idx); err != nil {
		return err
	}
	path := filepath.Join(gitDir, "index")
	f, err := createLockFile(path+".lock", time.Now().Add(st.Opts.LockTimeout))
	if err != nil {
		return err
	}
	return commitLockFile(f, path, buf.Bytes(), false)
}
