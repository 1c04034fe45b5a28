package hostemu

import "strings"

// checkSources rejects constructs the emulation cannot give their meaning,
// before the compiler sees them, with the source's name and line: what its
// language's check finds. It reads, never rewrites: the sources are
// compiled exactly as given.
func checkSources(p Program, names []string) string {
	if p.Lang.check == nil {
		return ""
	}
	var msgs []string
	for _, n := range names {
		msgs = append(msgs, p.Lang.check(n, tokenize(p.Sources[n]))...)
	}
	return strings.Join(msgs, "\n")
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
