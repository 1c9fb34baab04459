// Package s3blob implements blob.Store on an S3 bucket.
package s3blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/docpipe/docpipe/pipeline/blob"
)

// DefaultPartSize is the multipart part size: objects smaller than this go
// up in one PutObject.
const DefaultPartSize = 16 << 20

// Store is a blob.Store on one bucket, optionally under a key prefix. It is
// safe for concurrent use.
type Store struct {
	client      *s3.Client
	bucket      string
	prefix      string // "" or ending in "/"
	partSize    int64
	concurrency int
	//lint:ignore SA1019 its successor, feature/s3/transfermanager, is not a dependency yet; the Uploader is still maintained.
	uploader *manager.Uploader
}

var _ blob.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store) error

// WithPrefix stores every key under prefix, so that several deployments can
// share a bucket. Keys seen by callers never include it.
func WithPrefix(prefix string) Option {
	return func(s *Store) error {
		prefix = strings.TrimSuffix(prefix, "/")
		if prefix == "" {
			s.prefix = ""
			return nil
		}
		if err := blob.ValidateKey(prefix); err != nil {
			return fmt.Errorf("s3blob: prefix: %w", err)
		}
		s.prefix = prefix + "/"
		return nil
	}
}

// WithPartSize sets the multipart part size (at least S3's 5 MiB minimum).
// Memory used by one Put is about part size times concurrency.
func WithPartSize(n int64) Option {
	return func(s *Store) error {
		if n < manager.MinUploadPartSize {
			return fmt.Errorf("s3blob: part size %d is below S3's minimum %d", n, manager.MinUploadPartSize)
		}
		s.partSize = n
		return nil
	}
}

// WithConcurrency sets how many parts of one object upload at once.
func WithConcurrency(n int) Option {
	return func(s *Store) error {
		if n < 1 {
			return fmt.Errorf("s3blob: concurrency %d < 1", n)
		}
		s.concurrency = n
		return nil
	}
}

// New returns a Store on an existing bucket.
func New(client *s3.Client, bucket string, opts ...Option) (*Store, error) {
	s := &Store{client: client, bucket: bucket, partSize: DefaultPartSize, concurrency: manager.DefaultUploadConcurrency}
	if bucket == "" {
		return nil, errors.New("s3blob: empty bucket name")
	}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	//lint:ignore SA1019 see Store.uploader.
	s.uploader = manager.NewUploader(client, func(u *manager.Uploader) {
		u.PartSize = s.partSize
		u.Concurrency = s.concurrency
	})
	return s, nil
}

// PathStyleForEndpoint is an s3.Options function that switches to path-style
// addressing when an endpoint override (AWS_ENDPOINT_URL, LocalStack, moto)
// is configured: emulators serve http://host:port/bucket/key, not bucket
// subdomains.
func PathStyleForEndpoint(o *s3.Options) {
	if o.BaseEndpoint != nil {
		o.UsePathStyle = true
	}
}

func (s *Store) objectKey(key string) (string, error) {
	if err := blob.ValidateKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

// Put streams r to the object. Small objects take one PutObject; larger
// ones a multipart upload, completed (or aborted on error) as a whole. Both
// replace the object atomically.
func (s *Store) Put(ctx context.Context, key string, r io.Reader) error {
	k, err := s.objectKey(key)
	if err != nil {
		return err
	}
	//lint:ignore SA1019 see Store.uploader.
	_, err = s.uploader.Upload(ctx, &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k), Body: r})
	if err != nil {
		return fmt.Errorf("s3blob: put %s: %w", key, err)
	}
	return nil
}

// Get returns the object's body; the caller closes it.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	k, err := s.objectKey(key)
	if err != nil {
		return nil, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k)})
	if err != nil {
		return nil, interpretError("get", key, err)
	}
	return out.Body, nil
}

// Head describes one object.
func (s *Store) Head(ctx context.Context, key string) (blob.Info, error) {
	k, err := s.objectKey(key)
	if err != nil {
		return blob.Info{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k)})
	if err != nil {
		return blob.Info{}, interpretError("head", key, err)
	}
	return blob.Info{Key: key, Size: aws.ToInt64(out.ContentLength), Modified: aws.ToTime(out.LastModified)}, nil
}

// List returns every object under prefix in key order.
func (s *Store) List(ctx context.Context, prefix string) ([]blob.Info, error) {
	if err := blob.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	var infos []blob.Info
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket),
		Prefix: aws.String(s.prefix + prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, interpretError("list", prefix, err)
		}
		for _, o := range page.Contents {
			key, ok := strings.CutPrefix(aws.ToString(o.Key), s.prefix)
			if !ok || blob.ValidateKey(key) != nil {
				continue // written by something else; not addressable here
			}
			infos = append(infos, blob.Info{Key: key, Size: aws.ToInt64(o.Size), Modified: aws.ToTime(o.LastModified)})
		}
	}
	// S3 lists in UTF-8 byte order, which is Go's string order; sorting
	// keeps the promise on stores that do not.
	slices.SortFunc(infos, func(a, b blob.Info) int { return strings.Compare(a.Key, b.Key) })
	return infos, nil
}

// Delete removes an object; S3 already treats a missing key as deleted.
func (s *Store) Delete(ctx context.Context, key string) error {
	k, err := s.objectKey(key)
	if err != nil {
		return err
	}
	_, err = s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k)})
	if err != nil {
		return interpretError("delete", key, err)
	}
	return nil
}

// interpretError maps S3's "no such object" answers onto blob.ErrNotFound.
// HeadObject has no body, so a missing object there is only a 404.
func interpretError(op, key string, err error) error {
	var noKey *types.NoSuchKey
	var notFound *types.NotFound
	var api smithy.APIError
	var resp *smithyhttp.ResponseError
	switch {
	case errors.As(err, &noKey), errors.As(err, &notFound):
	case errors.As(err, &api) && (api.ErrorCode() == "NoSuchKey" || api.ErrorCode() == "NotFound"):
	case op == "head" && errors.As(err, &resp) && resp.HTTPStatusCode() == http.StatusNotFound:
	default:
		return fmt.Errorf("s3blob: %s %s: %w", op, key, err)
	}
	return fmt.Errorf("s3blob: %s %s: %w", op, key, blob.ErrNotFound)
}

// CreateBucket creates a bucket for development and tests; a bucket this
// account already owns is accepted.
func CreateBucket(ctx context.Context, client *s3.Client, name string) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(name)}
	if region := client.Options().Region; region != "" && region != "us-east-1" {
		// us-east-1 is the default and rejects being named explicitly.
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(region),
		}
	}
	_, err := client.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("s3blob: create bucket %s: %w", name, err)
	}
	return nil
}

// DeleteBucket empties and deletes a bucket, for tests and development.
func DeleteBucket(ctx context.Context, client *s3.Client, name string) error {
	p := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(name)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("s3blob: empty bucket %s: %w", name, err)
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, len(page.Contents))
		for i, o := range page.Contents {
			ids[i] = types.ObjectIdentifier{Key: o.Key}
		}
		if _, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(name),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		}); err != nil {
			return fmt.Errorf("s3blob: empty bucket %s: %w", name, err)
		}
	}
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)}); err != nil {
		return fmt.Errorf("s3blob: delete bucket %s: %w", name, err)
	}
	return nil
}
