package toolchain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// stderrCap bounds how much stderr an error carries: the first errors of a
// compiler are the useful ones, and a runaway tool must not flood messages.
const stderrCap = 4 << 10

// waitDelay bounds how long Run waits for the output pipes after the tool
// was killed: a child it spawned (a compiler driver's cc1, a shell script's
// command) may still hold them open.
var waitDelay = time.Second

// ErrStderr is the cause of a Run error when strictStderr is set and the
// tool exited successfully but wrote to stderr.
var ErrStderr = errors.New("wrote to stderr")

// RunError is the error Run returns. Its message names the tool, the
// arguments and the exit status, and includes the (trimmed, capped) stderr.
type RunError struct {
	Path string
	Args []string
	// ExitCode is the tool's exit status, or -1 when it did not exit by
	// itself (killed on timeout, failed to start).
	ExitCode int
	// Stderr is the tool's stderr, trimmed and capped at about 4 KiB.
	Stderr string
	// Err is the cause: an *exec.ExitError, the context's error on timeout or
	// cancellation, ErrStderr, or the error starting the tool.
	Err error
}

func (e *RunError) Error() string {
	var b strings.Builder
	b.WriteString(commandLine(e.Path, e.Args))
	b.WriteString(": ")
	switch {
	case errors.Is(e.Err, context.DeadlineExceeded):
		b.WriteString("timed out, killed")
	case errors.Is(e.Err, context.Canceled):
		b.WriteString("canceled, killed")
	case errors.Is(e.Err, ErrStderr):
		b.WriteString("exit status 0 but wrote to stderr")
	default:
		// "exit status N", "signal: ...", or why it could not start.
		b.WriteString(e.Err.Error())
	}
	if e.Stderr != "" {
		b.WriteString("; stderr:\n")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

func (e *RunError) Unwrap() error { return e.Err }

// Run executes the tool at path with args, feeding stdin when it is non-nil,
// and returns its stdout. The context bounds its run time. LC_ALL=C keeps
// messages and number formats stable for parsing and comparison.
//
// A non-zero exit, a timeout or cancellation, a failure to start, or — when
// strictStderr is set — any non-blank stderr output is a *RunError. The
// stdout captured so far is returned with the error too.
func Run(ctx context.Context, path string, args []string, stdin []byte, strictStderr bool) ([]byte, error) {
	stdout, _, err := run(ctx, path, args, stdin, strictStderr)
	return stdout, err
}

// run is Run that also returns the captured (capped) stderr, which version
// probes need for tools that print their version there.
func run(ctx context.Context, path string, args []string, stdin []byte, strictStderr bool) ([]byte, []byte, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	// exec keeps the last of duplicate variables, so this overrides.
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout bytes.Buffer
	stderr := &capWriter{limit: stderrCap}
	cmd.Stdout = &stdout
	cmd.Stderr = stderr
	cmd.WaitDelay = waitDelay

	err := cmd.Run()
	if ctxErr := ctx.Err(); ctxErr != nil && err != nil {
		// The kill shows up as "signal: killed"; the context says why.
		err = ctxErr
	}
	if err == nil && strictStderr && len(bytes.TrimSpace(stderr.buf)) > 0 {
		err = ErrStderr
	}
	if err == nil {
		return stdout.Bytes(), stderr.buf, nil
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if errors.Is(err, ErrStderr) {
		code = 0
	}
	return stdout.Bytes(), stderr.buf, &RunError{
		Path:     path,
		Args:     append([]string(nil), args...),
		ExitCode: code,
		Stderr:   stderr.text(),
		Err:      err,
	}
}

// capWriter keeps the first limit bytes written and counts the rest.
type capWriter struct {
	buf   []byte
	limit int
	total int
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.total += len(p)
	if room := w.limit - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// text is the kept output, trimmed, cut at a rune boundary and marked when
// something was dropped.
func (w *capWriter) text() string {
	b := w.buf
	if w.total > len(b) {
		// Drop a rune the cap split in two.
		for i := 0; i < utf8.UTFMax-1 && len(b) > 0; i++ {
			if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size > 1 {
				break
			}
			b = b[:len(b)-1]
		}
		return strings.TrimSpace(string(b)) + fmt.Sprintf("\n... (%d more bytes)", w.total-len(b))
	}
	return strings.TrimSpace(string(b))
}

// commandLine renders the tool's base name and its args, quoting args that
// a shell would split, so messages can be pasted back into a shell.
func commandLine(path string, args []string) string {
	parts := make([]string, 0, 1+len(args))
	parts = append(parts, filepath.Base(path))
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`*?[]{}();&|<>#~") {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}
