// Package toolchain describes the external programs kernelgen drives
// (shader compilers, validators, host C++ compilers, Vulkan drivers), finds
// them, reads their versions and runs them with uniform error reporting, so
// that callers and `kernelgen doctor` agree on what is missing and how to get
// it.
package toolchain

import (
	"fmt"
	"strings"
)

// Tool describes an external program kernelgen may use.
type Tool struct {
	// Name is the stable id used by Lookup and Require.
	Name string
	// Candidates are executable names tried in order on PATH.
	Candidates []string
	// VersionArgs make the executable print its version.
	VersionArgs []string
	// Purpose says in one line what kernelgen uses the tool for.
	Purpose string
	// Install says how to get the tool on Debian bookworm.
	Install string
	// Required is "ci" when CI needs the tool, "optional" otherwise.
	Required string
	// VersionMarker, when set, is a text on the line that holds the version,
	// for tools whose first line with a digit is something else (a
	// copyright, a banner).
	VersionMarker string
	// OS, when set, is the one GOOS the tool exists on.
	OS string
	// Reject, when set, says why a candidate found on PATH does not count
	// (too old, unable to run), or "".
	Reject func(candidate, path, version string, runErr error) string
	// Find, when set, replaces the search of PATH, for a tool that is not an
	// executable (a driver found through its manifest).
	Find func(Tool) Result
}

// Values of Tool.Required.
const (
	RequiredCI = "ci"
	Optional   = "optional"
)

// known are the tools every backend shares, ordered as a reader of
// `kernelgen doctor` wants them: what builds kernelgen, then the host
// compilers. A backend's own tools (its compilers, validators, drivers)
// are in its own file here and on its Backend value (Tools), which
// doctor lists after these in the registry's order.
var known = []Tool{
	{
		Name:        "go",
		Candidates:  []string{"go"},
		VersionArgs: []string{"version"},
		Purpose:     "builds and tests kernelgen itself",
		// bookworm's golang-go is 1.19, too old for go.mod.
		Install:  "Go 1.24 or newer from https://go.dev/dl (bookworm's golang-go is too old)",
		Required: RequiredCI,
	},
	{
		Name:        "just",
		Candidates:  []string{"just"},
		VersionArgs: []string{"--version"},
		Purpose:     "runs the justfile's shortcut recipes",
		Install:     "npm install -g rust-just",
		Required:    Optional,
	},
	{
		Name:        "g++",
		Candidates:  []string{"g++"},
		VersionArgs: []string{"--version"},
		Purpose:     "host C++ compiler for host-emulated kernels and the Vulkan test runner",
		Install:     "apt-get install -y g++",
		Required:    RequiredCI,
	},
	{
		Name: "clang++-22",
		// Plain clang++ is accepted only at major version >= 22 (rejectOldClang).
		Candidates:  []string{"clang++-22", "clang++"},
		VersionArgs: []string{"--version"},
		Purpose:     "CUDA -> PTX without the CUDA SDK, and a second host C++ compiler",
		Install:     "apt-get install -y clang-22",
		Required:    RequiredCI,
		Reject:      rejectOldClang,
	},
}

// Known returns the tools every backend shares. The slices are copies, so
// callers may modify them without affecting the table.
func Known() []Tool {
	out := make([]Tool, len(known))
	for i, t := range known {
		out[i] = t.clone()
	}
	return out
}

// Lookup returns the shared tool with the given name.
func Lookup(name string) (Tool, error) {
	names := make([]string, 0, len(known))
	for _, t := range known {
		if t.Name == name {
			return t.clone(), nil
		}
		names = append(names, t.Name)
	}
	return Tool{}, fmt.Errorf("toolchain: unknown tool %q (known: %s)", name, strings.Join(names, ", "))
}

func (t Tool) clone() Tool {
	t.Candidates = append([]string(nil), t.Candidates...)
	t.VersionArgs = append([]string(nil), t.VersionArgs...)
	return t
}
