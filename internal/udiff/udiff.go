// Package udiff produces unified diffs (the format of `diff -u`) between two
// texts, using a line-based Myers diff.
package udiff

import (
	"fmt"
	"strings"
)

// context is the number of unchanged lines shown around each change.
const context = 3

const noNewline = "\\ No newline at end of file\n"

// Unified returns a unified diff turning old into new with 3 lines of
// context, headed "--- oldName" and "+++ newName", or "" if the texts are
// equal. A final line without a newline is followed by
// "\ No newline at end of file", as diff prints it.
func Unified(oldName, newName string, old, new []byte) string {
	if string(old) == string(new) {
		return ""
	}
	a, b := splitLines(string(old)), splitLines(string(new))
	ops := script(a, b)

	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", oldName, newName)
	for _, h := range hunks(ops) {
		writeHunk(&sb, a, b, ops[h[0]:h[1]])
	}
	return sb.String()
}

// splitLines cuts s into lines that keep their "\n"; only the last line can
// lack one. Keeping the terminator makes "x" and "x\n" different lines, which
// is how diff treats a changed final newline.
func splitLines(s string) []string {
	var lines []string
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

type opKind byte

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// op is one line of the edit script; i and j are the positions in old and
// new before the line is consumed.
type op struct {
	kind opKind
	i, j int
}

// script turns the change marks into an ordered edit script, deletions
// before insertions within each change, as diff -u prints them.
func script(a, b []string) []op {
	delA, insB := diffLines(a, b)
	var ops []op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && delA[i]:
			ops = append(ops, op{opDelete, i, j})
			i++
		case j < len(b) && insB[j]:
			ops = append(ops, op{opInsert, i, j})
			j++
		default:
			ops = append(ops, op{opEqual, i, j})
			i++
			j++
		}
	}
	return ops
}

// hunks returns [start, end) ranges of ops, each a change with up to context
// equal lines around it; changes separated by at most 2*context equal lines
// share a hunk.
func hunks(ops []op) [][2]int {
	var out [][2]int
	for k := 0; k < len(ops); {
		if ops[k].kind == opEqual {
			k++
			continue
		}
		start := max(k-context, 0)
		end := k
		for {
			// end is one past the last change in this hunk so far.
			for end < len(ops) && ops[end].kind != opEqual {
				end++
			}
			next := end
			for next < len(ops) && ops[next].kind == opEqual {
				next++
			}
			if next == len(ops) || next-end > 2*context {
				break
			}
			end = next
		}
		stop := min(end+context, len(ops))
		out = append(out, [2]int{start, stop})
		k = stop
	}
	return out
}

func writeHunk(sb *strings.Builder, a, b []string, ops []op) {
	var na, nb int
	for _, o := range ops {
		if o.kind != opInsert {
			na++
		}
		if o.kind != opDelete {
			nb++
		}
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", rangeStr(ops[0].i, na), rangeStr(ops[0].j, nb))
	for _, o := range ops {
		var line string
		switch o.kind {
		case opEqual:
			line = " " + a[o.i]
		case opDelete:
			line = "-" + a[o.i]
		case opInsert:
			line = "+" + b[o.j]
		}
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteString("\n" + noNewline)
		}
	}
}

// rangeStr formats a hunk range as diff does: 1-based start, count omitted
// when 1, and for an empty range the number of the line before it.
func rangeStr(start0, n int) string {
	switch n {
	case 0:
		return fmt.Sprintf("%d,0", start0)
	case 1:
		return fmt.Sprintf("%d", start0+1)
	}
	return fmt.Sprintf("%d,%d", start0+1, n)
}

// diffLines marks a minimal set of lines of a to delete and of b to insert
// so that the remaining lines match.
func diffLines(a, b []string) (delA, insB []bool) {
	delA, insB = make([]bool, len(a)), make([]bool, len(b))

	// Intern lines so the inner loop compares ints.
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	ia, ib := intern(a), intern(b)

	// A line absent from the other side can never match, so mark it now and
	// diff only the rest; this keeps the Myers cost low when most lines
	// changed. Dropping unmatchable elements does not change the LCS.
	inA, inB := make([]bool, len(ids)), make([]bool, len(ids))
	for _, id := range ia {
		inA[id] = true
	}
	for _, id := range ib {
		inB[id] = true
	}
	var ra, rb, mapA, mapB []int
	for i, id := range ia {
		if inB[id] {
			ra, mapA = append(ra, id), append(mapA, i)
		} else {
			delA[i] = true
		}
	}
	for j, id := range ib {
		if inA[id] {
			rb, mapB = append(rb, id), append(mapB, j)
		} else {
			insB[j] = true
		}
	}

	m := &myers{a: ra, b: rb, delA: make([]bool, len(ra)), insB: make([]bool, len(rb))}
	n := len(ra) + len(rb) + 2
	m.vf, m.vr = make([]int, 2*n+1), make([]int, 2*n+1)
	m.compare(0, len(ra), 0, len(rb))
	for i, d := range m.delA {
		if d {
			delA[mapA[i]] = true
		}
	}
	for j, d := range m.insB {
		if d {
			insB[mapB[j]] = true
		}
	}
	return delA, insB
}

// myers is the linear-space divide-and-conquer form of Myers' O(ND) diff:
// find the middle snake of an optimal path, then solve both sides.
type myers struct {
	a, b       []int
	delA, insB []bool
	vf, vr     []int // furthest reach per diagonal, forward and reverse, offset by len/2
}

func (m *myers) compare(aLo, aHi, bLo, bHi int) {
	for aLo < aHi && bLo < bHi && m.a[aLo] == m.b[bLo] {
		aLo, bLo = aLo+1, bLo+1
	}
	for aLo < aHi && bLo < bHi && m.a[aHi-1] == m.b[bHi-1] {
		aHi, bHi = aHi-1, bHi-1
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			m.insB[j] = true
		}
		return
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			m.delA[i] = true
		}
		return
	}
	x0, y0, x1, y1 := m.middleSnake(aLo, aHi, bLo, bHi)
	m.compare(aLo, x0, bLo, y0)
	m.compare(x1, aHi, y1, bHi)
}

// middleSnake returns the snake (x0,y0)-(x1,y1), in absolute indices, in the
// middle of a shortest edit path of a[aLo:aHi] to b[bLo:bHi]. Both ranges
// are non-empty and differ in their first and last elements, so the path
// has at least one edit on each side of the snake unless D is 1, in which
// case one side is a single edit that compare resolves directly.
func (m *myers) middleSnake(aLo, aHi, bLo, bHi int) (x0, y0, x1, y1 int) {
	a, b := m.a[aLo:aHi], m.b[bLo:bHi]
	n, mm := len(a), len(b)
	delta := n - mm
	odd := delta&1 != 0
	off := len(m.vf) / 2
	vf, vr := m.vf, m.vr
	// vf[off+k]: furthest x on forward diagonal k = x-y from (0,0).
	// vr[off+k]: furthest x' on reverse diagonal k = x'-y' from (n,mm), where
	// x' = n-x, y' = mm-y; forward diagonal k is reverse diagonal delta-k.
	vf[off+1], vr[off+1] = 0, 0
	for d := 0; ; d++ {
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && vf[off+k-1] < vf[off+k+1]) {
				x = vf[off+k+1]
			} else {
				x = vf[off+k-1] + 1
			}
			y := x - k
			sx, sy := x, y
			for x < n && y < mm && a[x] == b[y] {
				x, y = x+1, y+1
			}
			vf[off+k] = x
			if rk := delta - k; odd && rk >= -(d-1) && rk <= d-1 && x+vr[off+rk] >= n {
				return aLo + sx, bLo + sy, aLo + x, bLo + y
			}
		}
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && vr[off+k-1] < vr[off+k+1]) {
				x = vr[off+k+1]
			} else {
				x = vr[off+k-1] + 1
			}
			y := x - k
			sx, sy := x, y
			for x < n && y < mm && a[n-1-x] == b[mm-1-y] {
				x, y = x+1, y+1
			}
			vr[off+k] = x
			if fk := delta - k; !odd && fk >= -d && fk <= d && x+vf[off+fk] >= n {
				return aLo + n - x, bLo + mm - y, aLo + n - sx, bLo + mm - sy
			}
		}
	}
}
