package hostemu

import (
	"fmt"
	"strings"
)

// checkSources rejects constructs the emulation cannot give their meaning, before
// the compiler sees them, with the source's name and line. It reads, never
// rewrites: the sources are compiled exactly as given.
//
//   - MSL `threadgroup` maps to `static` (shared by the workgroup), which is
//     only right for variables and arrays declared in a kernel; a threadgroup
//     pointer, reference, parameter, cast or initialized declaration would
//     fail to compile or, worse, be initialized once for all threads.
//   - CUDA `extern __shared__` (dynamic shared memory) has no host equivalent.
func checkSources(p Program, names []string) string {
	var msgs []string
	for _, n := range names {
		toks := tokenize(p.Sources[n])
		for i, t := range toks {
			switch {
			case p.Lang == MSL && t.text == "threadgroup" && i >= 2 && toks[i-1].text == "[" && toks[i-2].text == "[":
				msgs = append(msgs, fmt.Sprintf("%s:%d: error: threadgroup memory kernel arguments ([[threadgroup(n)]]) are not supported by the host emulation; declare a threadgroup array in the kernel", n, t.line))
			case p.Lang == MSL && t.text == "threadgroup":
				if why := threadgroupUse(toks[i+1:]); why != "" {
					msgs = append(msgs, fmt.Sprintf("%s:%d: error: threadgroup %s is not supported by the host emulation (threadgroup maps to static: only threadgroup variables and arrays declared inside a kernel, without initializer, work)", n, t.line, why))
				}
			case p.Lang == CUDA && t.text == "extern" && i+1 < len(toks) && toks[i+1].text == "__shared__":
				msgs = append(msgs, fmt.Sprintf("%s:%d: error: dynamic shared memory (extern __shared__) is not supported by the host emulation; declare a sized __shared__ array", n, t.line))
			}
		}
	}
	return strings.Join(msgs, "\n")
}

// threadgroupUse classifies what follows `threadgroup`: "" for a plain
// variable or array declaration, else what it is.
func threadgroupUse(rest []token) string {
	idents := 0
	for _, t := range rest {
		switch t.text {
		case "*", "&", "&&":
			return "pointer or reference"
		case "[", ";":
			if idents >= 2 {
				return ""
			}
			return "use"
		case "=", "{":
			return "declaration with an initializer"
		case ")", ",", "(":
			return "parameter or cast"
		}
		if isIdentStart(t.text[0]) {
			idents++
		}
	}
	return "use"
}

type token struct {
	text string
	line int
}

// tokenize splits C++ source into identifiers, numbers and punctuation,
// dropping comments, string and character literals and preprocessor lines.
func tokenize(src []byte) []token {
	var toks []token
	line := 1
	atLineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			line++
			atLineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
			continue
		case c == '#' && atLineStart:
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
					line++
					i++
				}
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			i += 2
			for i < len(src) && !(src[i] == '*' && i+1 < len(src) && src[i+1] == '/') {
				if src[i] == '\n' {
					line++
				}
				i++
			}
			i += 2
			continue
		}
		atLineStart = false
		switch {
		case c == '"' || c == '\'':
			i++
			for i < len(src) && src[i] != c && src[i] != '\n' {
				if src[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case isIdentStart(c):
			j := i
			for j < len(src) && (isIdentStart(src[j]) || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, token{string(src[i:j]), line})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && (isIdentStart(src[j]) || src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			toks = append(toks, token{string(src[i:j]), line})
			i = j
		case c == '&' && i+1 < len(src) && src[i+1] == '&':
			toks = append(toks, token{"&&", line})
			i += 2
		default:
			toks = append(toks, token{string(c), line})
			i++
		}
	}
	return toks
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
