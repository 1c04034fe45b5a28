package fusion

import (
	"fmt"
	"strings"
)

// MatcherIncludes are the standard headers MatcherC's text uses.
var MatcherIncludes = []string{"algorithm", "array", "unordered_map", "unordered_set", "vector"}

// HeaderC opens a step's header of its own: #pragma once, the backend's
// common header and each of includes (the kernels' headers), then the
// standard headers the matcher uses.
func HeaderC(common string, includes ...string) string {
	var w strings.Builder
	fmt.Fprintf(&w, "#pragma once\n\n#include %q\n", common)
	for _, i := range includes {
		fmt.Fprintf(&w, "#include %q\n", i)
	}
	w.WriteString("\n")
	for _, i := range MatcherIncludes {
		fmt.Fprintf(&w, "#include <%s>\n", i)
	}
	w.WriteString("\n")
	return w.String()
}

// IntroC is the comment before a step's matchers: the decode step llama.cpp
// builds and what the fusion makes of it; ran says how the backend runs the
// fused kernel ("run as one kernel").
func IntroC(ran string) string {
	return "// The gated delta net decode step as llama.cpp builds it, fused: the recurrent\n" +
		"// state and the conv state, each read by GET_ROWS through the sequences' slots\n" +
		"// and copied back into the cache rows of the ubatch, " + ran + " that\n" +
		"// reads and writes the cache rows in place.\n"
}

// CName is pt's name as C spells it in the matcher: its match struct
// (Prefix_CName) and its matches' member (ms.CName).
func (pt *Pattern) CName() string { return cName(pt.Name) }

// Run is a backend's spelling of what runs the fused steps (Run.C): each
// pattern's functions, then the function its node loop calls with each
// node, which runs the node's fused step where the node anchors one and
// tells the loop to skip every node a step replaces.
type Run struct {
	// Pattern writes pattern pt's functions, which Branch calls.
	Pattern   func(w *strings.Builder, pt *Pattern) error
	Doc       string // what the function does, a comment line without "// "
	Signature string // its head, through "{"
	// Matches, where set, is the line that names the graph's matches ms
	// where the signature does not; Skip, where set, the test that node is
	// no step's in place of ms.fused.count(node) == 0.
	Matches, Skip string
	Note          string // comment lines before the patterns' branches
	// Branch is pattern n's (CName) branch: it runs the step node anchors.
	Branch func(n string) string
}

// C writes each of patterns' functions, then the run with a branch for
// each; an error names its pattern.
func (r Run) C(w *strings.Builder, patterns ...*Pattern) error {
	for _, pt := range patterns {
		if err := r.Pattern(w, pt); err != nil {
			return fmt.Errorf("%s: %w", pt.Name, err)
		}
	}
	skip := r.Skip
	if skip == "" {
		skip = "ms.fused.count(node) == 0"
	}
	fmt.Fprintf(w, "\n// %s\n%s\n%s", r.Doc, r.Signature, r.Matches)
	fmt.Fprintf(w, "    if (%s) {\n        return false;\n    }\n%s", skip, r.Note)
	for _, pt := range patterns {
		w.WriteString(r.Branch(pt.CName()))
	}
	w.WriteString("    return true;\n}\n")
	return nil
}

// FindC is a Run branch that looks node up among pattern n's matches (ms
// "ms." or "ms->") and, where node anchors one, runs body: lines indented
// two steps, over the match n->second.
func FindC(ms, n, body string) string {
	return fmt.Sprintf("    const auto %[2]s = %[1]s%[2]s.find(node);\n    if (%[2]s != %[1]s%[2]s.end()) {\n%[3]s    }\n", ms, n, body)
}

// Find is a backend's call of the matcher before its node loop (FindC).
type Find struct {
	Indent string // the call's indentation
	// On is the condition under which the fusion is on; Matches where the
	// graph's matches go, declared there as a local where Local.
	On, Matches string
	Local       bool
	// Capture is the lambda's capture; Owns the lines of its test that a
	// cache's memory is the backend's, the first after "return ".
	Capture string
	Owns    []string
}

// FindC is the call f spells, of sp's matcher over the graph cgraph.
func (sp Spelling) FindC(f Find) string {
	var w strings.Builder
	in := f.Indent
	if f.Local {
		fmt.Fprintf(&w, "%s%s_matches %s;\n", in, sp.Prefix, f.Matches)
	}
	fmt.Fprintf(&w, "%sif (%s) {\n%s    %s_find(cgraph, [%s](const ggml_tensor * cache) {\n", in, f.On, in, sp.Prefix, f.Capture)
	for i, l := range f.Owns {
		lead := in + "        return "
		if i > 0 {
			lead = in + "               "
		}
		if i == len(f.Owns)-1 {
			l += ";"
		}
		fmt.Fprintf(&w, "%s%s\n", lead, l)
	}
	fmt.Fprintf(&w, "%s    }, %s);\n%s}\n", in, f.Matches, in)
	return w.String()
}

// RunCallC is the node loop's call of sp's run (Run) over args, at indent:
// the loop moves on where the node is one a fused step replaces.
func (sp Spelling) RunCallC(indent, args string) string {
	return fmt.Sprintf("%[1]sif (%[2]s_run(%[3]s)) {\n%[1]s    continue;\n%[1]s}\n", indent, sp.Prefix, args)
}
