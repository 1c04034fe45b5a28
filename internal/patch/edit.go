// Package patch splices kernelgen's kernels and glue into a ggml or llama.cpp
// source tree and turns the result into a git format-patch series.
//
// Every change is found by anchors (function signatures, switch cases, table
// entries: literal text the target already holds), never by line numbers. A
// change is planned in memory for every file first; only when every anchor
// of every selected backend is found is anything written, and then each file
// is replaced atomically (a failure restores the files already replaced).
// A change whose text is already in place counts as applied, so a second run
// changes nothing.
package patch

import (
	"fmt"
	"strings"
)

// Place says where an edit's text goes relative to the line holding its last
// anchor.
type Place int

const (
	// After inserts the text after the line holding the last anchor.
	After Place = iota
	// Before inserts the text before the line holding the last anchor.
	Before
	// Replace puts the text in place of the lines from the one holding the
	// last anchor through the one holding the first Until after it.
	Replace
)

// Edit inserts text into one file at an anchor.
//
// Anchor is a path of literal strings: the first must occur exactly once in
// the file (a function signature, a struct head); each next one is the first
// occurrence after the previous match (a line inside that function). The
// text is inserted whole lines at a time, so it must end in a newline.
type Edit struct {
	Name string // what the edit adds, for reports
	// Manifest names the backend whose integration manifest the edit
	// comes from, where that is not its step's (the reference's sections
	// of the ops commit): refusals name it.
	Manifest string
	File     string   // path below the ggml root, slash-separated
	Anchor   []string // literal strings located in order
	Place    Place
	Text     string
	// Until ends the lines a Replace edit replaces.
	Until string
	// Defines are names the text introduces (a function or struct head).
	// When the text is not in place but the file holds one of them, another
	// version of the change is there (an earlier kernelgen series, a hand
	// edit): the edit is refused instead of adding a second definition.
	Defines []string
	// OnlyIf, when set, limits the edit to files that hold it (code that only
	// some revisions of the target have); elsewhere the edit is skipped.
	OnlyIf string
	// Needs limits the edit to trees where the probe holds (a revision
	// family's own section); Unless skips it there (a base section that
	// revision replaces).
	Needs, Unless *Probe
}

// State is what locating an edit in a file found.
type State int

const (
	Missing State = iota // an anchor is not there (or the first is not unique)
	Pending              // anchors found, text not yet there
	Applied              // anchors found, text already in place
)

func (s State) String() string {
	return [...]string{"missing", "pending", "applied"}[s]
}

// Located is the outcome of locating one edit.
type Located struct {
	Edit  Edit
	State State
	// Why explains a Missing state: which anchor, and what was found instead.
	Why string
	// at is the byte offset where the text goes (Pending) or starts (Applied).
	at int
	// cut is how many bytes from at the text replaces (Replace).
	cut int
}

// locate finds e's insertion point in src.
func locate(e Edit, src string) Located {
	l := find(e, src)
	if l.State == Missing && e.Place == Replace && strings.Count(src, e.Text) == 1 {
		// the replaced lines are gone and the text is there
		return Located{Edit: e, State: Applied, at: strings.Index(src, e.Text)}
	}
	if l.State != Pending {
		return l
	}
	for _, d := range e.Defines {
		if strings.Contains(src, d) {
			l.State = Missing
			l.Why = fmt.Sprintf("the file already holds %q, but not as this patch writes it (an earlier kernelgen series or a hand edit): restore the file (git checkout) and run again", d)
			return l
		}
	}
	return l
}

func find(e Edit, src string) Located {
	l := Located{Edit: e}
	pos := 0
	for i, a := range e.Anchor {
		if i == 0 {
			if n := strings.Count(src, a); n != 1 {
				if n == 0 {
					l.Why = fmt.Sprintf("anchor %q not found", a)
				} else {
					l.Why = fmt.Sprintf("anchor %q found %d times, expected once", a, n)
				}
				return l
			}
		}
		j := strings.Index(src[pos:], a)
		if j < 0 {
			l.Why = fmt.Sprintf("anchor %q not found after %q", a, e.Anchor[i-1])
			return l
		}
		pos += j
		if i < len(e.Anchor)-1 {
			pos += len(a)
		}
	}
	lineStart := strings.LastIndexByte(src[:pos], '\n') + 1
	lineEnd := len(src)
	if k := strings.IndexByte(src[pos:], '\n'); k >= 0 {
		lineEnd = pos + k + 1
	}
	switch e.Place {
	case After:
		l.at = lineEnd
		if strings.HasPrefix(src[lineEnd:], e.Text) {
			l.State = Applied
			return l
		}
	case Before:
		l.at = lineStart
		if strings.HasSuffix(src[:lineStart], e.Text) {
			l.State = Applied
			l.at = lineStart - len(e.Text)
			return l
		}
	case Replace:
		k := strings.Index(src[pos:], e.Until)
		if k < 0 {
			l.Why = fmt.Sprintf("end %q not found after %q", e.Until, e.Anchor[len(e.Anchor)-1])
			return l
		}
		end := pos + k + len(e.Until)
		if end > 0 && src[end-1] != '\n' {
			if n := strings.IndexByte(src[end:], '\n'); n >= 0 {
				end += n + 1
			} else {
				end = len(src)
			}
		}
		l.at, l.cut = lineStart, end-lineStart
	}
	l.State = Pending
	return l
}

// insertAll applies the pending edits of one file to src. Insertion points
// are computed on the original text, so edits are applied from the end of
// the file backwards and cannot shift each other.
func insertAll(src string, ls []Located) string {
	pending := make([]Located, 0, len(ls))
	for i := len(ls) - 1; i >= 0; i-- {
		if ls[i].State == Pending {
			pending = append(pending, ls[i])
		}
	}
	// stable sort by descending offset; among equal offsets the later edit
	// of the plan is inserted first, so the texts end up in plan order.
	for i := 1; i < len(pending); i++ {
		for j := i; j > 0 && pending[j].at > pending[j-1].at; j-- {
			pending[j], pending[j-1] = pending[j-1], pending[j]
		}
	}
	for _, l := range pending {
		src = src[:l.at] + l.Edit.Text + src[l.at+l.cut:]
	}
	return src
}
