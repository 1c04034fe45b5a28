package backend

import "fmt"

// Found is the doctor fact of what a runtime finds (Vulkan's devices,
// OpenCL's platforms) under key: its JSON value is value(items, why they
// could not be listed, "" when they could), its lines one "<what>: not
// listed (<why>)" or "<what>: none found (<hint>)" line, or each item's.
func Found[T any](key, what, hint string, items []T, err error, value func(items []T, why string) any, lines func(T) []string) Fact {
	fact := Fact{Key: key}
	switch {
	case err != nil:
		fact.Value = value([]T{}, err.Error())
		fact.Lines = []string{fmt.Sprintf("%s: not listed (%s)", what, err)}
	case len(items) == 0:
		fact.Value = value(items, "")
		fact.Lines = []string{fmt.Sprintf("%s: none found (%s)", what, hint)}
	default:
		fact.Value = value(items, "")
		for _, it := range items {
			fact.Lines = append(fact.Lines, lines(it)...)
		}
	}
	return fact
}
