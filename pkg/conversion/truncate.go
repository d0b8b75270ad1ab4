package conversion

// Truncate cuts s to at most n bytes (at a rune boundary), marking the cut with "…": for
// tenant-chosen strings (names, resourceVersions, error messages) written into logs and
// messages.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 { // a UTF-8 continuation byte
		cut--
	}
	return s[:cut] + "…"
}
