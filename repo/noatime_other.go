//go:build !linux

package repo

const oNoatime = 0
