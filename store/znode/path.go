package znode

import (
	"strings"
	"unicode/utf8"
)

// ValidatePath reports whether ZooKeeper's PathUtils.validatePath accepts
// path: absolute, no trailing '/', no empty, "." or ".." component, and no
// control, surrogate, private-use or U+FFF0..U+FFFF character. Java checks
// UTF-16 chars: runes above U+FFFF are surrogate pairs and are refused, and
// bytes that are not UTF-8 decode to U+FFFD and are refused too.
func ValidatePath(path string) bool {
	if len(path) == 0 || path[0] != '/' {
		return false
	}
	if len(path) == 1 {
		return true
	}
	if path[len(path)-1] == '/' {
		return false
	}
	for i := 1; i < len(path); {
		c, size := utf8.DecodeRuneInString(path[i:])
		switch {
		case c == 0:
			return false
		case c == '/' && path[i-1] == '/':
			return false
		case c == '.' && !validDot(path, i):
			return false
		case invalidChar(c):
			return false
		}
		i += size
	}
	return true
}

// validDot checks a '.' at i: "." and ".." components are relative paths.
func validDot(path string, i int) bool {
	end := i+1 == len(path) || path[i+1] == '/'
	if !end {
		return true
	}
	if path[i-1] == '/' {
		return false // "/."
	}
	return !(path[i-1] == '.' && i >= 2 && path[i-2] == '/') // "/.."
}

func invalidChar(c rune) bool {
	return c > 0 && c <= 0x1f ||
		c >= 0x7f && c <= 0x9f ||
		c >= 0xd800 && c <= 0xf8ff ||
		c >= 0xfff0 // U+FFF0..U+FFFF, and supplementary runes (surrogates in Java)
}

// isSpecialPath reports ZooKeeper's undeletable system nodes
// (DataTree.isSpecialPath).
func isSpecialPath(path string) bool {
	switch path {
	case "/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config":
		return true
	}
	return false
}

// parentForWrite is getParentPathAndValidate of PrepRequestProcessor (delete
// and deleteContainer): it does not validate the whole path.
func parentForWrite(path string) (string, bool) {
	s := strings.LastIndexByte(path, '/')
	if s < 0 || strings.IndexByte(path, 0) >= 0 || isSpecialPath(path) {
		return "", false
	}
	return path[:s], true
}
