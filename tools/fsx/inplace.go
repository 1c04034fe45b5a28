package fsx

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// A target that cannot be swapped by renames (a mount point, or a directory
// whose parent is not writable) is replaced in place, with the same outcome
// after any interruption: the new tree is staged inside the target, then a
// journal naming the files to delete is written; that write is the commit.
// Before it, CleanStale deletes the staging and the old tree stands; after
// it, CleanStale finishes the moves, so the tree becomes the new one. (The
// difference from a swap: a process killed during the moves leaves a mix
// until kernelgen runs again.)
const (
	stagingName = ".kernelgen-staging"
	journalName = "DELETE" // inside the staging directory
)

// reserved are the entries of a target that fsx owns; ReadTree skips them.
func reserved(name string) bool { return name == stagingName || name == lockName }

// Seams for tests: a rename of a directory that fails as on a mount point,
// and a failure between two moves of a commit.
var (
	renameDir  = os.Rename
	mkdirTemp  = os.MkdirTemp
	beforeMove func(rel string) error
)

// replaceInPlace makes target (an existing directory) hold exactly files
// without moving it.
func replaceInPlace(target string, names []string, files map[string][]byte) error {
	staging := filepath.Join(target, stagingName)
	if err := os.RemoveAll(staging); err != nil {
		return err
	}
	tree := filepath.Join(staging, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return err
	}
	if err := build(tree, names, files); err != nil {
		os.RemoveAll(staging)
		return err
	}
	old, err := ReadTree(target)
	if err != nil {
		os.RemoveAll(staging)
		return err
	}
	var remove []string
	for p := range old {
		if _, keep := files[p]; !keep {
			remove = append(remove, p)
		}
	}
	sort.Strings(remove)
	var j bytes.Buffer
	for _, p := range remove {
		j.WriteString(p + "\n")
	}
	// The commit: a journal that is complete or absent.
	tmp := filepath.Join(staging, journalName+".tmp")
	if err := writeFile(tmp, j.Bytes()); err != nil {
		os.RemoveAll(staging)
		return err
	}
	syncDir(tree)
	if err := os.Rename(tmp, filepath.Join(staging, journalName)); err != nil {
		os.RemoveAll(staging)
		return err
	}
	syncDir(staging)
	if err := rollForward(target); err != nil {
		return fmt.Errorf("%w: %w", ErrIncomplete, err)
	}
	return nil
}

// ErrIncomplete is an in-place write that failed after its commit: the
// target is part old, part new until CleanStale (the next build) finishes it.
var ErrIncomplete = errors.New("the new tree is committed but not all in place; run the build again to finish it")

// rollForward finishes a committed in-place replacement: deletes what the
// journal lists, moves every staged file into place, removes directories
// left empty and the staging. Every step can be repeated, so an
// interrupted roll-forward is finished by the next.
func rollForward(target string) error {
	staging := filepath.Join(target, stagingName)
	j, err := os.ReadFile(filepath.Join(staging, journalName))
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(j))
	for sc.Scan() {
		rel := sc.Text()
		if rel == "" || !filepath.IsLocal(filepath.FromSlash(rel)) || reserved(strings.SplitN(rel, "/", 2)[0]) {
			return fmt.Errorf("fsx: %s: bad entry %q", filepath.Join(staging, journalName), rel)
		}
		if err := os.Remove(filepath.Join(target, filepath.FromSlash(rel))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := removeEmptyDirs(target); err != nil {
		return err
	}
	tree := filepath.Join(staging, "tree")
	var moves []string
	err = filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(tree, p)
		moves = append(moves, rel)
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, rel := range moves {
		if beforeMove != nil {
			if err := beforeMove(filepath.ToSlash(rel)); err != nil {
				return err
			}
		}
		dst := filepath.Join(target, rel)
		if err := mkdirAll(target, filepath.Dir(rel)); err != nil {
			return err
		}
		if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
			// A directory of the old tree is a file of the new one; the
			// journal emptied it.
			if err := os.RemoveAll(dst); err != nil {
				return err
			}
		}
		if err := os.Rename(filepath.Join(tree, rel), dst); err != nil {
			return err
		}
	}
	syncDir(target)
	return os.RemoveAll(staging)
}

// mkdirAll creates rel's directories under root with mode 0755.
func mkdirAll(root, rel string) error {
	if rel == "." {
		return nil
	}
	if err := mkdirAll(root, filepath.Dir(rel)); err != nil {
		return err
	}
	p := filepath.Join(root, rel)
	fi, err := os.Lstat(p)
	if err == nil && fi.IsDir() {
		return nil
	}
	if err == nil {
		return fmt.Errorf("fsx: %s is a file where the new tree has a directory", p)
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	return os.Chmod(p, 0o755)
}

// removeEmptyDirs removes directories under root (not root, not fsx's own
// entries) that hold no file.
func removeEmptyDirs(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != root && d.IsDir() {
			if filepath.Dir(p) == root && reserved(d.Name()) {
				return filepath.SkipDir
			}
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- { // deepest first
		if ents, err := os.ReadDir(dirs[i]); err == nil && len(ents) == 0 {
			if err := os.Remove(dirs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// cleanStaging finishes or undoes an interrupted in-place replacement of
// target: rolls forward a committed one, deletes an uncommitted staging.
func cleanStaging(target string) error {
	staging := filepath.Join(target, stagingName)
	if _, err := os.Lstat(staging); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if _, err := os.Lstat(filepath.Join(staging, journalName)); err == nil {
		if err := rollForward(target); err != nil {
			return fmt.Errorf("fsx: finishing the interrupted in-place write of %s: %w", target, err)
		}
		return nil
	}
	return os.RemoveAll(staging)
}
