package zkafkatest

import (
	"reflect"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrorResponse is req's response with code in every error code field,
// for a client to see as a broker's refusal: its topics, partitions,
// groups and other keyed entries mirror the request's (a field of the
// response that the request has too, by name and type, is copied; a list
// of entries in both is mirrored entry by entry), and its other fields
// keep kmsg's defaults. For example a Produce request of topic t
// partitions 0 and 1 gets a Produce response of topic t partitions 0 and 1,
// each with code.
//
// It walks kmsg's structs by reflection: every API key gets a response
// without a hand-written builder per key (this is test tooling on a
// decoded message, not a codec).
func ErrorResponse(req kmsg.Request, code int16) kmsg.Response {
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	mirror(reflect.ValueOf(resp).Elem(), reflect.ValueOf(req).Elem(), code)
	return resp
}

var errorCodeNames = map[string]bool{"ErrorCode": true}

// mirror fills dst (a kmsg response struct) from src (the request's
// matching struct).
func mirror(dst, src reflect.Value, code int16) {
	t := dst.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Name == "Version" {
			continue
		}
		d := dst.Field(i)
		if errorCodeNames[f.Name] && d.Kind() == reflect.Int16 {
			d.SetInt(int64(code))
			continue
		}
		s := src.FieldByName(f.Name)
		if !s.IsValid() {
			continue
		}
		switch {
		case d.Kind() == reflect.Slice && s.Kind() == reflect.Slice &&
			d.Type().Elem().Kind() == reflect.Struct && s.Type().Elem().Kind() == reflect.Struct:
			out := reflect.MakeSlice(d.Type(), s.Len(), s.Len())
			for j := 0; j < s.Len(); j++ {
				e := out.Index(j)
				if def, ok := e.Addr().Interface().(interface{ Default() }); ok {
					def.Default()
				}
				mirror(e, s.Index(j), code)
			}
			d.Set(out)
		case d.Type() == s.Type() && d.Kind() != reflect.Slice && d.Kind() != reflect.Struct:
			d.Set(s)
		case d.Kind() == reflect.Slice && d.Type() == s.Type() && d.Type().Elem().Kind() != reflect.Struct:
			d.Set(s) // lists of names or ids (DeleteTopics' TopicNames, ...)
		}
	}
}
