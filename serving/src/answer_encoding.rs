//! The evaluation answers compressed by the client's `Accept-Encoding`, as Unleash Edge compresses them:
//! zstd or gzip, the one the client prefers (zstd when it accepts both alike), each at its fastest level, in
//! one call over the whole answer with a compressor kept per thread, so that a request pays for its bytes and
//! not for setting a compressor up (BENCHMARKS.md, compression). Not br nor deflate: every client that
//! accepts them accepts gzip, and brotli's fast levels make flag JSON no smaller than gzip's at 2–3× the
//! time. Answers under [`SMALLEST`] bytes go as they are: they travel in one packet either way. The change
//! streams are not compressed (events are written as they happen).

use std::cell::RefCell;

use axum::http::HeaderValue;
use flate2::{Compress, Compression, Crc, FlushCompress, Status};

/// Answers shorter than this go uncompressed.
pub const SMALLEST: usize = 1024;

/// A content coding the answers can be sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Encoding {
    // In increasing order of preference between codings the client accepts alike.
    Gzip,
    Zstd,
}

impl Encoding {
    /// Its `Content-Encoding` value.
    pub fn header_value(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            Encoding::Gzip => "gzip",
            Encoding::Zstd => "zstd",
        })
    }

    fn of_token(token: &str) -> Option<Encoding> {
        [
            ("zstd", Encoding::Zstd),
            ("gzip", Encoding::Gzip),
            ("x-gzip", Encoding::Gzip),
        ]
        .into_iter()
        .find_map(|(name, encoding)| token.eq_ignore_ascii_case(name).then_some(encoding))
    }

    /// The coding to answer in for an `Accept-Encoding` value: the highest `q` among those it accepts
    /// (named, or by `*`), `None` when it accepts neither (`q=0` refuses one).
    pub fn preferred(accept_encoding: &[u8]) -> Option<Encoding> {
        let text = std::str::from_utf8(accept_encoding).ok()?;
        // Each coding's weight in thousandths: named, or from `*`.
        let mut named = [None::<u16>; 2];
        let mut any = None::<u16>;
        for item in text.split(',') {
            let mut parts = item.split(';');
            let token = parts.next().unwrap_or("").trim();
            let weight = parts
                .find_map(|p| {
                    let (name, value) = p.split_once('=')?;
                    name.trim()
                        .eq_ignore_ascii_case("q")
                        .then(|| weight_of(value.trim()))
                })
                .unwrap_or(Some(1000));
            let Some(weight) = weight else { continue };
            if token == "*" {
                any = Some(weight);
            } else if let Some(encoding) = Encoding::of_token(token) {
                named[encoding as usize] = Some(weight);
            }
        }
        [Encoding::Gzip, Encoding::Zstd]
            .into_iter()
            .filter_map(|e| Some((named[e as usize].or(any)?, e)))
            .filter(|&(weight, _)| weight > 0)
            .max()
            .map(|(_, encoding)| encoding)
    }

    /// `body` in this coding when it is an answer worth compressing (at least [`SMALLEST`] bytes); `None`
    /// when it is shorter or could not be compressed: then it goes as it is.
    pub fn encode_answer(self, body: &[u8]) -> Option<Vec<u8>> {
        if body.len() < SMALLEST {
            return None;
        }
        self.encode(body)
    }

    /// `body` in this coding; `None` when it could not be compressed (then it goes as it is).
    fn encode(self, body: &[u8]) -> Option<Vec<u8>> {
        match self {
            Encoding::Zstd => ZSTD.with(|slot| {
                let mut slot = slot.borrow_mut();
                if slot.is_none() {
                    *slot = zstd::bulk::Compressor::new(ZSTD_LEVEL).ok();
                }
                let mut out = Vec::with_capacity(zstd::zstd_safe::compress_bound(body.len()));
                slot.as_mut()?.compress_to_buffer(body, &mut out).ok()?;
                Some(out)
            }),
            Encoding::Gzip => DEFLATE.with(|deflate| gzip(&mut deflate.borrow_mut(), body)),
        }
    }
}

/// What the edge asks its upstream for (`vexil-edge edge`): Vexil answers zstd, Unleash gzip.
pub const UPSTREAM_ACCEPT_ENCODING: &str = "zstd, gzip";

impl Encoding {
    /// The coding a `Content-Encoding` value names: `Ok(None)` for none (`identity`), `Err` for one this
    /// server cannot decode.
    pub fn of_content_encoding(value: &str) -> Result<Option<Encoding>, String> {
        let value = value.trim();
        if value.is_empty() || value.eq_ignore_ascii_case("identity") {
            return Ok(None);
        }
        Encoding::of_token(value)
            .map(Some)
            .ok_or_else(|| format!("an answer in the unknown coding {value:?}"))
    }

    /// `body` (an answer in this coding) decoded; `Err` when it is not one, or decodes to more than `limit`
    /// bytes (then it is not held in memory).
    pub fn decode(self, body: &[u8], limit: u64) -> Result<Vec<u8>, String> {
        let reader: Box<dyn std::io::Read + '_> = match self {
            Encoding::Zstd => {
                Box::new(zstd::stream::read::Decoder::new(body).map_err(|e| format!("zstd: {e}"))?)
            }
            Encoding::Gzip => Box::new(flate2::read::MultiGzDecoder::new(body)),
        };
        let mut decoded = Vec::with_capacity(body.len().saturating_mul(8));
        std::io::Read::read_to_end(&mut std::io::Read::take(reader, limit + 1), &mut decoded)
            .map_err(|e| format!("an answer that does not decode: {e}"))?;
        if decoded.len() as u64 > limit {
            return Err(format!("an answer decoding to more than {limit} bytes"));
        }
        Ok(decoded)
    }
}

/// zstd's level 1: its fastest that still compresses like gzip's fastest.
const ZSTD_LEVEL: i32 = 1;

thread_local! {
    /// The thread's zstd compressor, made on its first answer.
    static ZSTD: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    /// The thread's raw deflate compressor (gzip's body), reset after each answer.
    static DEFLATE: RefCell<Compress> = RefCell::new(Compress::new(Compression::fast(), false));
}

/// The gzip member (RFC 1952) of `body`: a 10-byte header (no name, no time, unknown system), `body`
/// deflated by `deflate`, its CRC-32 and its length modulo 2^32, little-endian.
fn gzip(deflate: &mut Compress, body: &[u8]) -> Option<Vec<u8>> {
    const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    let mut out = Vec::with_capacity(body.len() / 4 + 64);
    out.extend_from_slice(&HEADER);
    deflate.reset();
    let mut status = Status::Ok;
    while status != Status::StreamEnd {
        out.reserve(body.len() / 8 + 64);
        let read = deflate.total_in() as usize;
        status = deflate
            .compress_vec(&body[read..], &mut out, FlushCompress::Finish)
            .ok()?;
    }
    let mut crc = Crc::new();
    crc.update(body);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    Some(out)
}

/// A `q` value (`0` to `1` with up to three decimals) in thousandths; `None` when it is not one.
fn weight_of(value: &str) -> Option<u16> {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths = match whole {
        "0" => fraction
            .bytes()
            .chain(std::iter::repeat(b'0'))
            .take(3)
            .fold(0u16, |n, b| n * 10 + u16::from(b - b'0')),
        "1" if fraction.bytes().all(|b| b == b'0') => 1000,
        _ => return None,
    };
    Some(thousandths)
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    #[test]
    fn the_highest_weight_wins_then_zstd_over_gzip() {
        let preferred = |header: &str| Encoding::preferred(header.as_bytes());
        assert_eq!(preferred("gzip, deflate, br, zstd"), Some(Encoding::Zstd));
        assert_eq!(preferred("gzip, deflate, br"), Some(Encoding::Gzip));
        assert_eq!(preferred("zstd;q=0.5, gzip;q=0.8"), Some(Encoding::Gzip));
        assert_eq!(preferred("GZIP;Q=1.000"), Some(Encoding::Gzip));
        assert_eq!(preferred("x-gzip"), Some(Encoding::Gzip));
        assert_eq!(preferred("*"), Some(Encoding::Zstd));
        assert_eq!(preferred("*;q=0.1, zstd;q=0"), Some(Encoding::Gzip));
        assert_eq!(preferred("gzip;q=0"), None);
        assert_eq!(preferred("br, deflate, identity"), None);
        assert_eq!(preferred(""), None);
        assert_eq!(preferred("gzip;q=2, zstd;q=0.0001"), None);
        assert_eq!(Encoding::preferred(b"gzip\xff"), None);
    }

    #[test]
    fn upstream_answers_decode_by_their_content_encoding() {
        let body = br#"{"version":2,"features":[]}"#.repeat(500);
        for encoding in [Encoding::Zstd, Encoding::Gzip] {
            let sent = encoding.encode(&body).unwrap();
            let named = Encoding::of_content_encoding(
                std::str::from_utf8(encoding.header_value().as_bytes()).unwrap(),
            );
            assert_eq!(named, Ok(Some(encoding)));
            assert_eq!(encoding.decode(&sent, 1 << 20).unwrap(), body);
            assert!(
                encoding.decode(&body, 1 << 20).is_err(),
                "plain text is no {encoding:?}"
            );
        }
        assert_eq!(Encoding::of_content_encoding("identity"), Ok(None));
        assert_eq!(Encoding::of_content_encoding(""), Ok(None));
        assert!(Encoding::of_content_encoding("br").is_err());
        // Past the limit an answer is refused, not held: 2 MiB of zeros in a few dozen kilobytes.
        let zeros = Encoding::Gzip.encode(&vec![0; 2 << 20]).unwrap();
        assert!(zeros.len() * 100 < 2 << 20, "{} bytes", zeros.len());
        assert!(Encoding::Gzip
            .decode(&zeros, 1 << 20)
            .unwrap_err()
            .contains("more than"));
        assert_eq!(
            Encoding::Gzip.decode(&zeros, 2 << 20).unwrap().len(),
            2 << 20
        );
    }

    #[test]
    fn each_coding_decodes_to_the_answer_also_when_its_compressor_is_reused() {
        for length in [100, 50_000, 20] {
            let body = br#"{"toggles":[{"name":"a","enabled":true}]}"#.repeat(length);
            let zstd = Encoding::Zstd.encode(&body).unwrap();
            assert_eq!(zstd::decode_all(&zstd[..]).unwrap(), body);
            let gzip = Encoding::Gzip.encode(&body).unwrap();
            let mut decoded = Vec::new();
            flate2::read::GzDecoder::new(&gzip[..])
                .read_to_end(&mut decoded)
                .unwrap();
            assert_eq!(decoded, body);
            if length > 20 {
                assert!(zstd.len() < body.len() / 10 && gzip.len() < body.len() / 10);
            }
        }
    }
}
