// Package proctest runs the real ckpt binary as separate processes, against the real git
// CLI, to prove what no in-process test can: that a kill -9 at any moment, several writers
// at once and readers racing writers leave every session an ordinary, valid repository in
// which every commit ckpt reported is present. It also holds the whole-process benchmarks
// (ckpt commit against git add && git commit, ckpt log, ckpt diff).
//
// The package has no code of its own: everything lives in its _test.go files. TestMain
// builds the binary once; every test gets its own store (CKPT_HOME) and its own HOME with an
// empty git configuration.
package proctest
