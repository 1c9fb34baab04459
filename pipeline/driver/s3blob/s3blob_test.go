package s3blob_test

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/docpipe/docpipe/pipeline/blob"
	"github.com/docpipe/docpipe/pipeline/blob/blobtest"
	"github.com/docpipe/docpipe/pipeline/driver/awscount"
	"github.com/docpipe/docpipe/pipeline/driver/awstest"
	"github.com/docpipe/docpipe/pipeline/driver/s3blob"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	client := awstest.S3(t) // skips without an endpoint
	bucket := awstest.Bucket(t, client)
	blobtest.Exercise(t, func(t *testing.T) blob.Store {
		// A fresh prefix per subtest keeps listings apart in one bucket.
		s, err := s3blob.New(client, bucket, s3blob.WithPrefix(awstest.UniqueName("conf")))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestPrefixIsInvisibleAndSeparates(t *testing.T) {
	t.Parallel()
	client := awstest.S3(t)
	bucket := awstest.Bucket(t, client)
	ctx := t.Context()
	a, err := s3blob.New(client, bucket, s3blob.WithPrefix("deploy-a/"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s3blob.New(client, bucket, s3blob.WithPrefix("deploy-b"))
	if err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, a, "p/d/x.txt", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := blob.PutBytes(ctx, b, "p/d/y.txt", []byte("bb")); err != nil {
		t.Fatal(err)
	}
	infos, err := a.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || infos[0].Key != "p/d/x.txt" || infos[0].Size != 1 {
		t.Errorf("deploy-a lists %+v, want only p/d/x.txt", infos)
	}
	if _, err := a.Head(ctx, "p/d/y.txt"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("deploy-a sees deploy-b's object: %v", err)
	}
	if info, err := b.Head(ctx, "p/d/y.txt"); err != nil || info.Key != "p/d/y.txt" || info.Size != 2 {
		t.Errorf("Head = %+v, %v", info, err)
	}
	// The prefix really is in the bucket.
	if _, err := client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: ptr("deploy-b/p/d/y.txt")}); err != nil {
		t.Errorf("raw object under the prefix: %v", err)
	}
}

// An object over the part size goes up as a multipart upload and reads back
// whole.
func TestMultipartPut(t *testing.T) {
	t.Parallel()
	var counter awscount.Counter
	client := awstest.S3(t, func(o *s3.Options) { o.APIOptions = append(o.APIOptions, counter.AddTo) })
	bucket := awstest.Bucket(t, client)
	ctx := t.Context()
	const partSize = 5 << 20
	s, err := s3blob.New(client, bucket, s3blob.WithPartSize(partSize), s3blob.WithConcurrency(2))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 2*partSize+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	// A plain io.Reader: the store must not need to seek or know the size.
	if err := s.Put(ctx, "big/object.bin", io.MultiReader(bytes.NewReader(data))); err != nil {
		t.Fatal(err)
	}
	got, err := blob.GetBytes(ctx, s, "big/object.bin", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes that differ from the %d written", len(got), len(data))
	}
	n := counter.Snapshot()
	if n["S3.CreateMultipartUpload"] != 1 || n["S3.UploadPart"] != 3 || n["S3.CompleteMultipartUpload"] != 1 || n["S3.PutObject"] != 0 {
		t.Errorf("requests %v, want one multipart upload of 3 parts", n)
	}
}

func TestOptionsRejectBadValues(t *testing.T) {
	t.Parallel()
	client := s3.New(s3.Options{Region: "us-east-1"}) // never used: no request is made
	for name, opt := range map[string]s3blob.Option{
		"prefix ..":        s3blob.WithPrefix("a/../b"),
		"prefix absolute":  s3blob.WithPrefix("/a"),
		"small part":       s3blob.WithPartSize(1 << 20),
		"zero concurrency": s3blob.WithConcurrency(0),
	} {
		if _, err := s3blob.New(client, "bucket", opt); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := s3blob.New(client, ""); err == nil {
		t.Error("empty bucket: no error")
	}
	s, err := s3blob.New(client, "bucket")
	if err != nil {
		t.Fatal(err)
	}
	// Invalid keys are refused before any request.
	for _, key := range []string{"", "/abs", "a//b", "a/../b", "a\\b"} {
		if err := s.Put(t.Context(), key, bytes.NewReader(nil)); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", key, err)
		}
		if _, err := s.Get(t.Context(), key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
	if _, err := s.List(t.Context(), "a//"); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("List(a//) = %v, want ErrInvalidKey", err)
	}
}

func ptr(s string) *string { return &s }
