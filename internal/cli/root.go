// Package cli implements the kernelgen command line. Main is testable
// without a subprocess: it takes the arguments and writers and returns the
// exit code (0 ok, 1 stale or different, 2 error).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

// Exit codes.
const (
	ExitOK    = 0
	ExitStale = 1
	ExitError = 2
)

// exitError carries an exit code through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func fail(code int, format string, args ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, args...)}
}

// stale is the quiet exit 1 of --check: the diff is already printed.
var errStale = &exitError{code: ExitStale, err: errors.New("generated files are stale; run kernelgen build to update them")}

// Main runs kernelgen with args and returns the exit code.
func Main(args []string, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	root := newRoot(out, stderr)
	root.SetArgs(args)
	// An interrupt cancels the run: tool runs stop, build swaps its output
	// tree in only at the very end, patch finishes or undoes its renames,
	// and the error says which.
	ctx, stop := notifyContext(context.Background())
	defer stop()
	err := root.ExecuteContext(ctx)
	if out.err != nil {
		// Lost output is an error whatever the command concluded: a
		// --check's "see above" with nothing above, a listing cut short.
		if err != nil && !errors.Is(err, out.err) {
			fmt.Fprintln(stderr, "kernelgen:", message(err))
		}
		fmt.Fprintf(stderr, "kernelgen: writing the output: %v (what was printed is incomplete)\n", out.err)
		return ExitError
	}
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintln(stderr, "kernelgen:", ee.err)
		return ee.code
	}
	// cobra's own errors: unknown command or flag, bad arguments.
	fmt.Fprintln(stderr, "kernelgen:", err)
	fmt.Fprintln(stderr, "Run 'kernelgen --help' for usage.")
	return ExitError
}

// message is what an error of a command says.
func message(err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.err
	}
	return err
}

// checkedWriter is the output every command writes to: it keeps the first
// write error, which Main reports, so a full disk or a closed file never
// ends in exit 0. Writes after it fail at once.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	c.err = err
	return n, err
}

// stopSignals are the signals that interrupt a run: Ctrl-C, kill's
// default, and a closed terminal.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// interrupted is the cause of a run's context when a signal stopped it.
type interrupted struct{ sig os.Signal }

func (e *interrupted) Error() string {
	name := map[os.Signal]string{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}[e.sig]
	return "interrupted by " + name
}

// notifyContext is signal.NotifyContext for stopSignals, with the signal
// as the context's cause. Signals after the first are caught too (and
// ignored): the first one's cancellation is already under way, and a
// second must not kill the process inside a step it has to finish.
func notifyContext(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, stopSignals...)
	go func() {
		select {
		case sig := <-ch:
			cancel(&interrupted{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "kernelgen",
		Short: "Generate the gated-DeltaNet decode kernels for Go, Metal, Vulkan, SYCL and CUDA from one IR",
		Long: `kernelgen describes the gated-DeltaNet (GDN) and conv-update decode kernels of
ggml once, in a Go DSL that builds an IR, and lowers them to every backend with
the arithmetic order fixed. It also emits each backend's glue for ggml.

Typical use:
  kernelgen list                      what exists: ops, variants, backends
  kernelgen ir gated_delta_net        the IR of one kernel
  kernelgen build --backend all       (re)write generated/
  kernelgen build --backend all --check   exit 1 with a diff if generated/ is stale (CI)
  kernelgen doctor                    which toolchains are installed

Exit codes: 0 ok, 1 stale or different, 2 error.`,
		Version:       version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("kernelgen {{.Version}}\n")
	root.AddCommand(newListCmd(), newIRCmd(), newBuildCmd(), newDiffCmd(), newPatchCmd(), newDoctorCmd())
	strictCompletion(root)
	return root
}

// strictCompletion makes `completion` with no shell or an unknown one an
// error (cobra's default prints the help and exits 0, which a script
// redirecting it into a file would not notice).
func strictCompletion(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, sub := range c.Commands() {
			shells = append(shells, sub.Name())
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fail(ExitError, "completion: name a shell: %s", strings.Join(shells, ", "))
			}
			return fail(ExitError, "completion: no completion for shell %q; kernelgen has it for %s", args[0], strings.Join(shells, ", "))
		}
	}
}

// version comes from the build info: the module version, or the VCS
// revision of a source build.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := info.Main.Version
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if (v == "" || v == "(devel)") && rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		return "devel " + rev + dirty
	}
	if v == "" {
		return "(devel)"
	}
	return v
}

// colorMode decides whether to color output: --color=auto|always|never,
// honouring NO_COLOR in auto mode.
func useColor(mode string, w io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "auto", "":
		if os.Getenv("NO_COLOR") != "" {
			return false, nil
		}
		return isTerminal(w), nil
	}
	return false, fail(ExitError, "--color %q: want auto, always or never", mode)
}

func isTerminal(w io.Writer) bool {
	if c, ok := w.(*checkedWriter); ok {
		w = c.w
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
