package platform

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"arena/accounts"
	"arena/botkits"
	"arena/internal/errs"
	"arena/similarity"
	"arena/sourcebuild"
	"arena/store"
)

// SimilarityNote is what every similarity report says first.
const SimilarityNote = "A score says how much of two bots is alike: their sources once names, comments, spacing, " +
	"the starter kits and what most of the bots share are left out, or, for bots pushed with docker, the files " +
	"their images add. It is a reason to look at the two, side by side, never a verdict."

// SimilarityReport is the pairs of versions whose sources look alike,
// the most alike first.
type SimilarityReport struct {
	Note     string              `json:"note"`
	Versions []SimilarityVersion `json:"versions"`
	Pairs    []SimilarityPair    `json:"pairs"`
}

// SimilarityVersion is a version compared (By: its "source", kept with
// it, or its "image", for one pushed with docker) or not, and why.
type SimilarityVersion struct {
	Version  string `json:"version"`
	Owner    string `json:"owner"`
	Digest   string `json:"digest,omitempty"`
	Compared bool   `json:"compared"`
	By       string `json:"by,omitempty"`
	Why      string `json:"why,omitempty"`
}

// SimilarityPair is two versions and what they share: compared By their
// sources, the regions of each with their lines; by their images, the
// files both add (the same content), each side's path.
type SimilarityPair struct {
	A        string             `json:"a"`
	B        string             `json:"b"`
	By       string             `json:"by"`
	Score    float64            `json:"score"`
	Shared   int                `json:"shared"`
	RegionsA []SimilarityRegion `json:"regions_a,omitempty"`
	RegionsB []SimilarityRegion `json:"regions_b,omitempty"`
	Files    [][2]string        `json:"files,omitempty"`
}

// SimilarityRegion is a run of lines of a file, with the lines.
type SimilarityRegion struct {
	similarity.Span
	Lines []string `json:"lines"`
}

// similarityPairsMax bounds the pairs a report lists.
const similarityPairsMax = 100

// Similarity compares the kept uploads of versions named
// repository:tag. Admins only.
func (rs *Registry) Similarity(ctx context.Context, p accounts.Principal, versions []string) (SimilarityReport, error) {
	s := rs.p
	if err := staff(p, "compare bots"); err != nil {
		return SimilarityReport{}, err
	}
	if len(versions) < 2 {
		return SimilarityReport{}, errs.New(errs.ErrInvalid, "versions: name two or more, REPOSITORY:TAG,…")
	}
	if len(versions) > 500 {
		return SimilarityReport{}, errs.New(errs.ErrInvalid, "versions: 500 at most")
	}
	var tags []store.Tag
	for _, v := range versions {
		repo, tag, ok := strings.Cut(strings.TrimSpace(v), ":")
		if !ok || repo == "" || tag == "" {
			return SimilarityReport{}, errs.Errorf(errs.ErrInvalid, "versions: %q is not REPOSITORY:TAG", v)
		}
		t, found, err := s.deps.Store.TagOf(ctx, repo, tag)
		if err != nil {
			return SimilarityReport{}, err
		}
		if !found {
			return SimilarityReport{}, errs.Errorf(errs.ErrNotFound, "versions: no pushed version %s", v)
		}
		tags = append(tags, t)
	}
	return s.similarity(ctx, tags)
}

// Similarity compares the final versions of a contest's entries.
// Admins only.
func (ct *Contests) Similarity(ctx context.Context, p accounts.Principal, id int64) (SimilarityReport, error) {
	s := ct.p
	if err := staff(p, "compare bots"); err != nil {
		return SimilarityReport{}, err
	}
	if _, err := s.deps.Store.Contest(ctx, id); err != nil {
		return SimilarityReport{}, err
	}
	entries, err := s.deps.Store.ContestEntries(ctx, id)
	if err != nil {
		return SimilarityReport{}, err
	}
	var tags []store.Tag
	for _, e := range entries {
		if e.FinalID == "" {
			continue
		}
		// The version pinned at the deadline, by its manifest's digest.
		repo, digest, ok := strings.Cut(e.FinalDigest, "@")
		if !ok {
			continue
		}
		ns, _, _ := strings.Cut(repo, "/")
		_, tag, _ := strings.Cut(e.FinalRef, ":")
		t := store.Tag{Repository: repo, Tag: tag, Owner: ns, Digest: digest, ImageID: e.FinalID}
		tags = append(tags, t)
	}
	if len(tags) == 0 {
		return SimilarityReport{Note: SimilarityNote, Versions: []SimilarityVersion{}, Pairs: []SimilarityPair{}}, nil
	}
	return s.similarity(ctx, tags)
}

// similarity compares the kept uploads of tags.
func (s *Platform) similarity(ctx context.Context, tags []store.Tag) (SimilarityReport, error) {
	rep := SimilarityReport{Note: SimilarityNote, Versions: []SimilarityVersion{}, Pairs: []SimilarityPair{}}
	var sources []similarity.Source
	var images []similarity.Image
	files := map[string]map[string][]string{} // version → file → lines
	for _, t := range tags {
		v := SimilarityVersion{Version: t.Repository + ":" + t.Tag, Owner: t.Owner, Digest: t.Digest}
		archive, kept, err := s.deps.Store.Source(ctx, t.Digest)
		if err != nil {
			return SimilarityReport{}, err
		}
		var src sourcebuild.Source
		if kept {
			src, err = sourcebuild.Read(archive, sourcebuild.DefaultLimits)
		}
		switch {
		case !kept && s.registry != nil:
			// Pushed with docker: compared by what its image adds.
			img, err := s.registry.Image(ctx, t.Repository, t.Digest)
			if err != nil {
				v.Why = fmt.Sprintf("its image does not read: %v", err)
				break
			}
			v.Compared, v.By = true, "image"
			images = append(images, similarity.Image{ID: v.Version, Image: img})
		case !kept:
			v.Why = "no upload kept, and no registry to read its image from"
		case err != nil:
			v.Why = fmt.Sprintf("its kept upload does not read: %v", err)
		default:
			v.Compared, v.By = true, "source"
			one := similarity.Source{ID: v.Version}
			files[v.Version] = map[string][]string{}
			for _, f := range src.Files {
				if similarity.Language(f.Name) == "" {
					continue
				}
				one.Files = append(one.Files, similarity.File{Name: f.Name, Data: f.Data})
				files[v.Version][f.Name] = strings.Split(string(f.Data), "\n")
			}
			sources = append(sources, one)
		}
		rep.Versions = append(rep.Versions, v)
	}
	if err := ctx.Err(); err != nil {
		return SimilarityReport{}, errors.Join(err, errs.New(errs.ErrUnavailable, "the report was cut short"))
	}
	for _, pair := range similarity.Report(sources, kitSources()) {
		rep.Pairs = append(rep.Pairs, SimilarityPair{A: pair.A, B: pair.B, By: "source", Score: pair.Score, Shared: pair.Shared,
			RegionsA: regions(files[pair.A], pair.Match.A), RegionsB: regions(files[pair.B], pair.Match.B)})
	}
	if len(images) > 1 {
		pairs, err := similarity.ImageReport(images)
		if err != nil {
			return SimilarityReport{}, err
		}
		for _, pair := range pairs {
			rep.Pairs = append(rep.Pairs, SimilarityPair{A: pair.A, B: pair.B, By: "image", Score: pair.Score, Shared: pair.Shared, Files: pair.Files})
		}
	}
	slices.SortStableFunc(rep.Pairs, func(x, y SimilarityPair) int { return cmp.Compare(y.Score, x.Score) })
	rep.Pairs = rep.Pairs[:min(len(rep.Pairs), similarityPairsMax)]
	return rep, nil
}

// kitSources are the starter kits' files, which count for no one.
func kitSources() []similarity.File {
	var out []similarity.File
	for _, f := range botkits.Files() {
		out = append(out, similarity.File{Name: f.Name, Data: f.Data})
	}
	return out
}

// regions gives spans their lines.
func regions(files map[string][]string, spans []similarity.Span) []SimilarityRegion {
	out := []SimilarityRegion{}
	for _, sp := range spans {
		lines := files[sp.File]
		first, last := max(1, sp.First), min(len(lines), sp.Last)
		r := SimilarityRegion{Span: sp, Lines: []string{}}
		if first <= last {
			r.Lines = lines[first-1 : last]
		}
		out = append(out, r)
	}
	return out
}
