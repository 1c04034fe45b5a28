//go:build unix

package fsx

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// stuck makes target behave as a mount point: it cannot be renamed.
func stuck(t *testing.T, target string) {
	t.Helper()
	renameDir = func(from, to string) error {
		if from == target {
			return &os.LinkError{Op: "rename", Old: from, New: to, Err: syscall.EBUSY}
		}
		return os.Rename(from, to)
	}
	t.Cleanup(func() { renameDir = os.Rename })
}

func sameDir(t *testing.T, a, b os.FileInfo) {
	t.Helper()
	if !os.SameFile(a, b) {
		t.Error("the target directory was replaced, not written in place")
	}
}

// A target that cannot be renamed (EBUSY: a mount point) or whose parent
// takes no new entry (EACCES) is written in place: same directory, exactly
// the new files, a file where a directory was and the reverse, nothing of
// fsx's left behind.
func TestReplaceDirInPlace(t *testing.T) {
	for _, why := range []string{"mount point", "parent not writable"} {
		t.Run(why, func(t *testing.T) {
			root := t.TempDir()
			target := filepath.Join(root, "out")
			old := bytesMap(map[string]string{"keep": "old", "gone/a": "1", "x/y": "2", "z": "3"})
			if err := ReplaceDir(target, old); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Stat(target)
			if why == "mount point" {
				stuck(t, target)
			} else {
				mkdirTemp = func(string, string) (string, error) {
					return "", &os.PathError{Op: "mkdirtemp", Path: root, Err: syscall.EACCES}
				}
				t.Cleanup(func() { mkdirTemp = os.MkdirTemp })
			}
			next := bytesMap(map[string]string{"keep": "new", "x": "file now", "z/w": "dir now", "n/m/o": "4"})
			if err := ReplaceDir(target, next); err != nil {
				t.Fatal(err)
			}
			if got := mustRead(t, target); !sameTree(got, next) {
				t.Fatalf("tree = %q, want %q", got, next)
			}
			after, _ := os.Stat(target)
			sameDir(t, before, after)
			if s := siblings(t, target, "keep", "x", "z", "n"); len(s) != 0 {
				t.Errorf("left in the target: %v", s)
			}
			if s := siblings(t, root, "out"); len(s) != 0 {
				t.Errorf("left beside the target: %v", s)
			}
		})
	}
}

// Interrupted before its commit, an in-place write leaves the old tree
// (CleanStale removes the staging); interrupted after, CleanStale finishes
// it. Every point of the moves is tried.
func TestReplaceDirInPlaceInterrupted(t *testing.T) {
	old := bytesMap(map[string]string{"a": "old a", "b/c": "old c", "d": "old d", "e/f": "old f"})
	next := bytesMap(map[string]string{"a": "new a", "b/c": "new c", "b/g": "new g", "h": "new h"})
	injected := errors.New("killed (injected)")

	// Before the commit: a failed write and a crashed one.
	root := t.TempDir()
	target := filepath.Join(root, "out")
	if err := ReplaceDir(target, old); err != nil {
		t.Fatal(err)
	}
	stuck(t, target)
	beforeWrite = func(i int, _ string) error {
		if i == 2 {
			return injected
		}
		return nil
	}
	err := ReplaceDir(target, next)
	beforeWrite = nil
	if !errors.Is(err, injected) {
		t.Fatalf("err = %v", err)
	}
	if got := mustRead(t, target); !sameTree(got, old) {
		t.Fatalf("after a failure before the commit: %q", got)
	}
	if err := os.MkdirAll(filepath.Join(target, stagingName, "tree", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(target, stagingName, "tree", "b", "c"), []byte("half"), 0o644)
	if err := CleanStale(target); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, target); !sameTree(got, old) {
		t.Fatalf("after CleanStale of an uncommitted staging: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(target, stagingName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("staging left: %v", err)
	}

	// After the commit: killed before each move in turn.
	for k := 0; k < len(next); k++ {
		target := filepath.Join(t.TempDir(), "out")
		if err := ReplaceDir(target, old); err != nil {
			t.Fatal(err)
		}
		stuck(t, target)
		moves := 0
		beforeMove = func(string) error {
			if moves == k {
				return injected
			}
			moves++
			return nil
		}
		err := ReplaceDir(target, next)
		beforeMove = nil
		if !errors.Is(err, injected) || !errors.Is(err, ErrIncomplete) {
			t.Fatalf("k=%d: err = %v, want the injected error as ErrIncomplete", k, err)
		}
		if err := CleanStale(target); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, target); !sameTree(got, next) {
			t.Fatalf("killed before move %d, then CleanStale: %q, want %q", k, got, next)
		}
		if _, err := os.Lstat(filepath.Join(target, stagingName)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("staging left: %v", err)
		}
	}
}

// A missing target whose parent takes no new entry cannot be created; the
// error says so and what to do.
func TestReplaceDirParentNotWritable(t *testing.T) {
	root := t.TempDir()
	mkdirTemp = func(string, string) (string, error) {
		return "", &os.PathError{Op: "mkdirtemp", Path: root, Err: syscall.EACCES}
	}
	defer func() { mkdirTemp = os.MkdirTemp }()
	err := ReplaceDir(filepath.Join(root, "out"), bytesMap(map[string]string{"a": "1"}))
	if err == nil || !errors.Is(err, syscall.EACCES) || !strings.Contains(err.Error(), "not writable") || !strings.Contains(err.Error(), "another output directory") {
		t.Fatalf("err = %v", err)
	}
}
