// Package modeltest is a stateful model test of ckpt's first promise: nothing the agent or
// its harness wrote is ever lost.
//
// A generator turns a seed into a sequence of operations over one store, or two stores
// ("homes") that share a bare git remote: the agent appends a notes entry, the harness
// edits a section of checkpoint.md on disk (now and then breaking a heading), and the real
// ckpt binary runs write, write --file notes.md, commit, sync, sync --sparse with a growing
// transcript, restore (whole, or one section), gc (with and without squashing), push and
// pull. Any ckpt command may run while the agent keeps appending to notes.md, and any may
// be killed with SIGKILL in the middle. Every string the agent or the harness wrote carries
// a unique token; after every step each token must be in a work tree or in a blob that a
// ref of some repository reaches, every repository must pass git fsck, and the exit code
// must be the one DESIGN.md gives for the situation.
//
// The package has no code of its own: everything lives in its _test.go files. The short
// run is part of go test ./...; make soak runs it for as long as asked. A failure prints
// its seed; go test ./internal/modeltest -run TestModel -seed=N replays that sequence.
package modeltest
