//go:build unix

package fsx

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// generation is a tree whose every file says which write made it, so a
// reader can tell a whole tree from a mix; "count" is how many writes came
// before it.
func generation(id string, count, files int) map[string][]byte {
	m := map[string][]byte{"count": []byte(strconv.Itoa(count))}
	for i := 0; i < files; i++ {
		m[fmt.Sprintf("d%d/f%02d", i%3, i)] = []byte(id)
	}
	return m
}

// wholeTree returns the id of the write that made tree, or an error saying
// how it is mixed.
func wholeTree(tree map[string][]byte, files int) (string, int, error) {
	n, err := strconv.Atoi(string(tree["count"]))
	if err != nil {
		return "", 0, fmt.Errorf("count %q: %v", tree["count"], err)
	}
	if len(tree) != files+1 {
		return "", 0, fmt.Errorf("%d files, want %d", len(tree), files+1)
	}
	id := string(tree["d0/f00"])
	for p, b := range tree {
		if p != "count" && string(b) != id {
			return "", 0, fmt.Errorf("%s is from write %q, d0/f00 from %q", p, b, id)
		}
	}
	return id, n, nil
}

// Many writers and readers of one directory at once, in random
// interleavings, round after round: every writer composes from the tree
// the one before it left (no update is lost, as the count shows), every
// reader sees a whole tree, and nothing is left beside the target, the
// lock file included.
func TestLockOrdersWritersAndReaders(t *testing.T) {
	const files, writers, readers = 12, 4, 3
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	root := t.TempDir()
	target := filepath.Join(root, "out")
	r := rand.New(rand.NewPCG(1, 2))
	total := 0
	for round := 0; round < rounds; round++ {
		delays := make([]time.Duration, writers+readers)
		for i := range delays {
			delays[i] = time.Duration(r.IntN(3000)) * time.Microsecond
		}
		var wg sync.WaitGroup
		errs := make(chan error, writers+readers)
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				time.Sleep(delays[w])
				l, err := LockTarget(context.Background(), target, true, nil)
				if err != nil {
					errs <- err
					return
				}
				defer l.Unlock()
				if err := CleanStale(target); err != nil {
					errs <- err
					return
				}
				old, err := ReadTree(target)
				if err != nil {
					errs <- err
					return
				}
				count := 0
				if len(old) > 0 {
					if _, count, err = wholeTree(old, files); err != nil {
						errs <- fmt.Errorf("writer saw a broken tree: %v", err)
						return
					}
				}
				errs <- ReplaceDir(target, generation(fmt.Sprintf("r%dw%d", round, w), count+1, files))
			}(w)
		}
		for rd := 0; rd < readers; rd++ {
			wg.Add(1)
			go func(rd int) {
				defer wg.Done()
				time.Sleep(delays[writers+rd])
				l, err := LockTarget(context.Background(), target, false, nil)
				if err != nil {
					errs <- err
					return
				}
				defer l.Unlock()
				tree, err := ReadTree(target)
				if err == nil && len(tree) > 0 {
					_, _, err = wholeTree(tree, files)
				}
				if err != nil {
					err = fmt.Errorf("reader: %v", err)
				}
				errs <- err
			}(rd)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		total += writers
		_, count, err := wholeTree(mustRead(t, target), files)
		if err != nil || count != total {
			t.Fatalf("round %d: count %d, want %d (%v): a write was lost", round, count, total, err)
		}
		if s := siblings(t, root, "out"); len(s) != 0 {
			t.Fatalf("round %d: left beside the target: %v", round, s)
		}
	}
}

// A waiter is told who holds the lock, gives up after LockTimeout with a
// message naming the holder and the lock file, and stops when its context
// ends.
func TestLockWaitsThenTimesOut(t *testing.T) {
	target := filepath.Join(t.TempDir(), "out")
	held, err := LockTarget(context.Background(), target, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func(d time.Duration) { LockTimeout = d }(LockTimeout)
	LockTimeout = 200 * time.Millisecond
	var told []string
	_, err = LockTarget(context.Background(), target, true, func(file, holder string) { told = append(told, file, holder) })
	var le *LockedError
	pid := strconv.Itoa(os.Getpid())
	if !errors.As(err, &le) || le.Holder != pid || !strings.Contains(err.Error(), "pid "+pid) || !strings.Contains(err.Error(), LockPath(target)) {
		t.Fatalf("err = %v; want a LockedError naming pid %s and %s", err, pid, LockPath(target))
	}
	if len(told) != 2 || told[0] != LockPath(target) || told[1] != pid {
		t.Errorf("waiting was told %q", told)
	}
	// A reader waits for a writer too.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := LockTarget(ctx, target, false, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("reader during a write: %v, want the context's error", err)
	}
	if err := held.Unlock(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(LockPath(target)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after the last unlock: %v", err)
	}
	// Readers share.
	a, err := LockTarget(context.Background(), target, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LockTarget(context.Background(), target, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	a.Unlock()
	if _, err := os.Lstat(LockPath(target)); err != nil {
		t.Errorf("lock file removed while a reader still holds it: %v", err)
	}
	b.Unlock()
	if _, err := os.Lstat(LockPath(target)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after the last reader: %v", err)
	}
}

// A process that dies holding the lock releases it (flock is the kernel's).
func TestLockDiesWithItsHolder(t *testing.T) {
	if os.Getenv("FSX_LOCK_CHILD") != "" {
		if _, err := LockTarget(context.Background(), os.Getenv("FSX_LOCK_CHILD"), true, nil); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	target := filepath.Join(t.TempDir(), "out")
	cmd := execSelf(t, "TestLockDiesWithItsHolder", "FSX_LOCK_CHILD="+target)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 7)
	if _, err := out.Read(buf); err != nil || string(buf) != "locked\n" {
		t.Fatalf("child: %q %v", buf, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = LockTarget(ctx, target, true, nil)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("lock held by a live child: %v", err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	l, err := LockTarget(context.Background(), target, true, nil)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Unlock()
}

// execSelf runs this test binary again, running only test, with env added.
func execSelf(t *testing.T, test string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// LockFile orders holders of a lock file the caller names, as LockTarget
// does its own: the second writer waits (told the file and the holder's
// pid), the last holder removes the file, and a reader that cannot create
// it takes no lock.
func TestLockFileAtANamedPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kernelgen.lock")
	a, err := LockFile(context.Background(), "tree", file, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	ctx, cancel := context.WithCancel(context.Background())
	_, err = LockFile(ctx, "tree", file, true, func(f, holder string) {
		told = append(told, f, holder)
		cancel() // seen waiting: stop here
	})
	if !errors.Is(err, context.Canceled) || len(told) != 2 || told[0] != file || told[1] != strconv.Itoa(os.Getpid()) {
		t.Fatalf("second writer: %v, told %q", err, told)
	}
	a.Unlock()
	if _, err := os.Lstat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file left after its holder: %v", err)
	}
	r, err := LockFile(context.Background(), "tree", filepath.Join(dir, "absent", "kernelgen.lock"), false, nil)
	if r != nil || err != nil {
		t.Errorf("reader without a lock file: %v %v", r, err)
	}
	if _, err := LockFile(context.Background(), "tree", filepath.Join(dir, "absent", "kernelgen.lock"), true, nil); err == nil || !strings.Contains(err.Error(), "absent/kernelgen.lock cannot be created") {
		t.Errorf("writer without a lock file: %v", err)
	}
}
