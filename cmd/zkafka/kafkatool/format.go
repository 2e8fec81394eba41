package kafkatool

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A recordFormat writes records as kcat's -f does:
//
//	%t topic  %p partition  %o offset  %k key  %s value  %K key length
//	%S value length  %T timestamp (ms)  %h headers (k=v,k=v)  %% a percent
//	\n newline  \t tab  \\ a backslash
//
// A key or value that is absent prints as nothing, its length as -1.
type recordFormat []formatPiece

// formatPiece is literal text or, when verb != 0, one %-verb.
type formatPiece struct {
	lit  string
	verb byte
}

// parseFormat compiles a --format string.
func parseFormat(s string) (recordFormat, error) {
	var out recordFormat
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, formatPiece{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				lit.WriteByte('\n')
			case 't':
				lit.WriteByte('\t')
			case 'r':
				lit.WriteByte('\r')
			case '\\':
				lit.WriteByte('\\')
			default:
				lit.WriteByte('\\')
				lit.WriteByte(s[i])
			}
		case c == '%':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("--format %q: a %% at the end", s)
			}
			i++
			if s[i] == '%' {
				lit.WriteByte('%')
				continue
			}
			if !strings.ContainsRune("tpoksKSTh", rune(s[i])) {
				return nil, fmt.Errorf("--format %q: unknown verb %%%c (want %%t %%p %%o %%k %%s %%K %%S %%T %%h)", s, s[i])
			}
			flush()
			out = append(out, formatPiece{verb: s[i]})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return out, nil
}

func lenOrNull(b []byte) string {
	if b == nil {
		return "-1"
	}
	return strconv.Itoa(len(b))
}

// append appends r as the format says.
func (f recordFormat) append(dst []byte, r *kgo.Record) []byte {
	for _, p := range f {
		switch p.verb {
		case 0:
			dst = append(dst, p.lit...)
		case 't':
			dst = append(dst, r.Topic...)
		case 'p':
			dst = strconv.AppendInt(dst, int64(r.Partition), 10)
		case 'o':
			dst = strconv.AppendInt(dst, r.Offset, 10)
		case 'k':
			dst = append(dst, r.Key...)
		case 's':
			dst = append(dst, r.Value...)
		case 'K':
			dst = append(dst, lenOrNull(r.Key)...)
		case 'S':
			dst = append(dst, lenOrNull(r.Value)...)
		case 'T':
			dst = strconv.AppendInt(dst, r.Timestamp.UnixMilli(), 10)
		case 'h':
			for i, h := range r.Headers {
				if i > 0 {
					dst = append(dst, ',')
				}
				dst = append(dst, h.Key...)
				dst = append(dst, '=')
				dst = append(dst, h.Value...)
			}
		}
	}
	return dst
}

// jsonRecord is a record as -o json prints it, one object per line.
type jsonRecord struct {
	Topic     string            `json:"topic"`
	Partition int32             `json:"partition"`
	Offset    int64             `json:"offset"`
	Timestamp int64             `json:"timestamp"`
	Key       *string           `json:"key"`
	Value     *string           `json:"value"`
	Headers   map[string]string `json:"headers,omitempty"`
}

func appendJSONRecord(dst []byte, r *kgo.Record) []byte {
	j := jsonRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Timestamp: r.Timestamp.UnixMilli()}
	if r.Key != nil {
		k := string(r.Key)
		j.Key = &k
	}
	if r.Value != nil {
		v := string(r.Value)
		j.Value = &v
	}
	if len(r.Headers) > 0 {
		j.Headers = map[string]string{}
		for _, h := range r.Headers {
			j.Headers[h.Key] = string(h.Value)
		}
	}
	b, _ := json.Marshal(j)
	return append(append(dst, b...), '\n')
}
