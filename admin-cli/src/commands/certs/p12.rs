//! PKCS#12 bundles (RFC 7292) of a client certificate and its key, for browsers and operating
//! systems to import, so that the web console can present the identity axctl uses.
//!
//! The bundle is what OpenSSL 3 writes by default, which Chromium/NSS, Firefox, Windows and
//! macOS import: the certificates (the client's and the CA's) in a plain `data` safe, the private
//! key in a `pkcs8ShroudedKeyBag` encrypted with PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC), and the
//! whole protected by an HMAC-SHA256 integrity MAC with the PKCS#12 key derivation. The key and the
//! client certificate share a `localKeyId` and a `friendlyName`, so importers pair them.
//!
//! Written here with yasna (DER), ring (PBKDF2, HMAC, SHA-256, randomness) and the RustCrypto AES
//! and CBC crates, because every PKCS#12 crate brings a second major version of crates already in
//! the build, or legacy RC2/3DES that OpenSSL 3 refuses by default.

use aes::cipher::{BlockEncryptMut, KeyIvInit, block_padding::Pkcs7};
use anyhow::{Context as _, Result};
use ring::{digest, hmac, pbkdf2, rand::SecureRandom};
use yasna::{Tag, models::ObjectIdentifier};

/// PBKDF2 and MAC iterations: OpenSSL 3's default. The password is random (see [`password`]), so
/// the iterations do not carry its strength.
const ITERATIONS: u32 = 2048;

const DATA: &[u64] = &[1, 2, 840, 113_549, 1, 7, 1];
const SHROUDED_KEY_BAG: &[u64] = &[1, 2, 840, 113_549, 1, 12, 10, 1, 2];
const CERT_BAG: &[u64] = &[1, 2, 840, 113_549, 1, 12, 10, 1, 3];
const X509_CERTIFICATE: &[u64] = &[1, 2, 840, 113_549, 1, 9, 22, 1];
const FRIENDLY_NAME: &[u64] = &[1, 2, 840, 113_549, 1, 9, 20];
const LOCAL_KEY_ID: &[u64] = &[1, 2, 840, 113_549, 1, 9, 21];
const PBES2: &[u64] = &[1, 2, 840, 113_549, 1, 5, 13];
const PBKDF2: &[u64] = &[1, 2, 840, 113_549, 1, 5, 12];
const HMAC_SHA256: &[u64] = &[1, 2, 840, 113_549, 2, 9];
const AES_256_CBC: &[u64] = &[2, 16, 840, 1, 101, 3, 4, 1, 42];
const SHA256: &[u64] = &[2, 16, 840, 1, 101, 3, 4, 2, 1];

fn oid(arcs: &[u64]) -> ObjectIdentifier {
    ObjectIdentifier::from_slice(arcs)
}

/// What goes into one bundle.
#[derive(Debug)]
pub struct Bundle<'a> {
    /// The client certificate, DER.
    pub cert: &'a [u8],
    /// Its private key, PKCS#8 DER.
    pub key: &'a [u8],
    /// The CA that signed it, DER (importers show the chain; the CA is not trusted by importing).
    pub ca: &'a [u8],
    /// The name importers show, e.g. `ax admin alice`.
    pub friendly_name: &'a str,
}

/// A random password of 24 letters and digits (about 143 bits), easy to paste into an import
/// dialog.
pub fn password(rng: &dyn SecureRandom) -> Result<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    let mut out = String::with_capacity(24);
    while out.len() < 24 {
        let mut byte = [0u8; 1];
        rng.fill(&mut byte).map_err(|_| anyhow::anyhow!("no randomness for the PKCS#12 password"))?;
        // Rejection sampling keeps every character equally likely.
        let limit = 256 - 256 % ALPHABET.len();
        if usize::from(byte[0]) < limit {
            out.push(char::from(ALPHABET[usize::from(byte[0]) % ALPHABET.len()]));
        }
    }
    Ok(out)
}

/// The DER of a PKCS#12 bundle of `b`, protected by `password`.
pub fn encode(b: &Bundle<'_>, password: &str, rng: &dyn SecureRandom) -> Result<Vec<u8>> {
    let random = |n: usize| -> Result<Vec<u8>> {
        let mut v = vec![0u8; n];
        rng.fill(&mut v).map_err(|_| anyhow::anyhow!("no randomness for the PKCS#12 bundle"))?;
        Ok(v)
    };
    let local_key_id = digest::digest(&digest::SHA256, b.cert).as_ref().to_vec();
    let (key_salt, iv, mac_salt) = (random(16)?, random(16)?, random(16)?);

    // The key, encrypted: PBES2 with PBKDF2-HMAC-SHA256 over the password's UTF-8 bytes (RFC 9579).
    let mut aes_key = [0u8; 32];
    pbkdf2::derive(
        pbkdf2::PBKDF2_HMAC_SHA256,
        std::num::NonZeroU32::new(ITERATIONS).context("iterations")?,
        &key_salt,
        password.as_bytes(),
        &mut aes_key,
    );
    let iv16: [u8; 16] = iv.as_slice().try_into().context("iv")?;
    let encrypted =
        cbc::Encryptor::<aes::Aes256>::new(&aes_key.into(), &iv16.into()).encrypt_padded_vec_mut::<Pkcs7>(b.key);

    let attributes = |w: yasna::DERWriter<'_>| {
        w.write_set(|w| {
            w.next().write_sequence(|w| {
                w.next().write_oid(&oid(FRIENDLY_NAME));
                w.next().write_set(|w| w.next().write_bmp_string(b.friendly_name));
            });
            w.next().write_sequence(|w| {
                w.next().write_oid(&oid(LOCAL_KEY_ID));
                w.next().write_set(|w| w.next().write_bytes(&local_key_id));
            });
        });
    };
    let cert_bag = |w: yasna::DERWriter<'_>, der: &[u8], with_attributes: bool| {
        w.write_sequence(|w| {
            w.next().write_oid(&oid(CERT_BAG));
            w.next().write_tagged(Tag::context(0), |w| {
                w.write_sequence(|w| {
                    w.next().write_oid(&oid(X509_CERTIFICATE));
                    w.next().write_tagged(Tag::context(0), |w| w.write_bytes(der));
                });
            });
            if with_attributes {
                attributes(w.next());
            }
        });
    };
    let certs = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            cert_bag(w.next(), b.cert, true);
            cert_bag(w.next(), b.ca, false);
        });
    });
    let keys = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_sequence(|w| {
                w.next().write_oid(&oid(SHROUDED_KEY_BAG));
                w.next().write_tagged(Tag::context(0), |w| {
                    w.write_sequence(|w| {
                        w.next().write_sequence(|w| {
                            w.next().write_oid(&oid(PBES2));
                            w.next().write_sequence(|w| {
                                w.next().write_sequence(|w| {
                                    w.next().write_oid(&oid(PBKDF2));
                                    w.next().write_sequence(|w| {
                                        w.next().write_bytes(&key_salt);
                                        w.next().write_u32(ITERATIONS);
                                        w.next().write_sequence(|w| {
                                            w.next().write_oid(&oid(HMAC_SHA256));
                                            w.next().write_null();
                                        });
                                    });
                                });
                                w.next().write_sequence(|w| {
                                    w.next().write_oid(&oid(AES_256_CBC));
                                    w.next().write_bytes(&iv);
                                });
                            });
                        });
                        w.next().write_bytes(&encrypted);
                    });
                });
                attributes(w.next());
            });
        });
    });
    let data = |w: yasna::DERWriter<'_>, content: &[u8]| {
        w.write_sequence(|w| {
            w.next().write_oid(&oid(DATA));
            w.next().write_tagged(Tag::context(0), |w| w.write_bytes(content));
        });
    };
    let auth_safe = yasna::construct_der(|w| {
        w.write_sequence(|w| {
            data(w.next(), &certs);
            data(w.next(), &keys);
        });
    });

    // The integrity MAC: HMAC-SHA256 of the authenticated safe, keyed by the PKCS#12 KDF (ID 3).
    let mac_key = pkcs12_kdf(password, &mac_salt, 3, ITERATIONS);
    let mac = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &mac_key), &auth_safe);
    Ok(yasna::construct_der(|w| {
        w.write_sequence(|w| {
            w.next().write_u8(3);
            data(w.next(), &auth_safe);
            w.next().write_sequence(|w| {
                w.next().write_sequence(|w| {
                    w.next().write_sequence(|w| {
                        w.next().write_oid(&oid(SHA256));
                        w.next().write_null();
                    });
                    w.next().write_bytes(mac.as_ref());
                });
                w.next().write_bytes(&mac_salt);
                w.next().write_u32(ITERATIONS);
            });
        });
    }))
}

/// The key derivation of RFC 7292 appendix B.2 with SHA-256 (u = 32, v = 64), for `id` (3: the
/// MAC key), over the password as a BMPString with its two-byte terminator. Returns 32 bytes.
fn pkcs12_kdf(password: &str, salt: &[u8], id: u8, iterations: u32) -> [u8; 32] {
    const V: usize = 64;
    let mut pass: Vec<u8> = password.encode_utf16().flat_map(u16::to_be_bytes).collect();
    pass.extend_from_slice(&[0, 0]);
    let fill = |src: &[u8]| -> Vec<u8> {
        if src.is_empty() {
            return Vec::new();
        }
        let len = V * src.len().div_ceil(V);
        src.iter().copied().cycle().take(len).collect()
    };
    let mut i_block = fill(salt);
    i_block.extend(fill(&pass));
    // One round gives the 32 bytes asked for (u = 32): A = H^iterations(D || I).
    let mut a = {
        let mut ctx = digest::Context::new(&digest::SHA256);
        ctx.update(&[id; V]);
        ctx.update(&i_block);
        ctx.finish()
    };
    for _ in 1..iterations {
        a = digest::digest(&digest::SHA256, a.as_ref());
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(a.as_ref());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pkcs12_kdf_depends_on_the_password_the_salt_and_the_id() {
        // Its output is checked against OpenSSL end to end (the MAC verifies) in init.rs's tests.
        let a = pkcs12_kdf("secret", b"saltsalt", 3, 2048);
        assert_eq!(a, pkcs12_kdf("secret", b"saltsalt", 3, 2048));
        assert_ne!(a, pkcs12_kdf("secret", b"saltsalt", 1, 2048));
        assert_ne!(a, pkcs12_kdf("secret", b"saltsalu", 3, 2048));
        assert_ne!(a, pkcs12_kdf("secreu", b"saltsalt", 3, 2048));
    }

    #[test]
    fn passwords_are_24_unambiguous_characters_and_differ() {
        let rng = ring::rand::SystemRandom::new();
        let a = password(&rng).expect("password");
        let b = password(&rng).expect("password");
        assert_eq!(a.len(), 24);
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric() && !"0O1lI".contains(c)), "{a}");
        assert_ne!(a, b);
    }
}
