//! The codec of ax.v1's services (client and server): tonic's prost codec, except for what a
//! request that does not decode is answered with.
//!
//! tonic's prost codec answers bytes that are not the expected message with INTERNAL, as if axd had
//! failed. When axd receives them (an ax.v1 request, or a `WorkerMessage`) the caller sent them, so
//! [`AxCodec`] makes that INVALID_ARGUMENT, naming the message type and what prost found wrong.
//! A client that receives a response (or a `SchedulerMessage`) it cannot decode keeps tonic's
//! INTERNAL: the fault is not in its arguments but in the server (or a version mismatch).
//!
//! Which side a message is on follows from its name (buf's standard lint: `<Rpc>Request` and
//! `<Rpc>Response`; the worker stream's two messages are named here); a test checks every method of
//! the descriptor set against [`is_inbound_to_server`].

use std::marker::PhantomData;

use prost::Message;
use tonic::{
    Status,
    codec::{BufferSettings, Codec, DecodeBuf, Decoder},
};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

/// The codec named by the generated clients and servers (`codec_path` in `tests/generated.rs`).
#[derive(Debug, Clone)]
pub struct AxCodec<T, U> {
    _pd: PhantomData<(T, U)>,
}

impl<T, U> Default for AxCodec<T, U> {
    fn default() -> Self {
        AxCodec { _pd: PhantomData }
    }
}

impl<T, U> Codec for AxCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = AxDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<T, U>::default().encoder()
    }

    fn decoder(&mut self) -> Self::Decoder {
        AxDecoder { inner: ProstCodec::<T, U>::default().decoder() }
    }
}

/// Decodes with prost; see the module doc for the status of bytes that do not decode.
#[derive(Debug, Clone)]
pub struct AxDecoder<U> {
    inner: ProstDecoder<U>,
}

impl<U: Message + Default> Decoder for AxDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.inner.decode(buf).map_err(|status| undecodable(message_name::<U>(), status))
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.inner.buffer_settings()
    }
}

/// The message's name without its Rust path, e.g. `CreateTaskRequest`.
fn message_name<U>() -> &'static str {
    let full = std::any::type_name::<U>();
    full.rsplit("::").next().unwrap_or(full)
}

/// Whether the message `name` (of package ax.v1) is one that a server of ax.v1 receives.
pub fn is_inbound_to_server(name: &str) -> bool {
    name.ends_with("Request") || name == "WorkerMessage"
}

fn undecodable(name: &str, status: Status) -> Status {
    if is_inbound_to_server(name) {
        Status::invalid_argument(format!("not a valid ax.v1.{name}: {}", status.message()))
    } else {
        status
    }
}

#[cfg(test)]
mod tests {
    use prost::Message as _;

    use super::*;

    #[test]
    fn every_method_s_input_is_inbound_and_its_output_is_not() {
        let set = prost_types::FileDescriptorSet::decode(crate::FILE_DESCRIPTOR_SET).expect("descriptor set");
        let mut methods = 0;
        for file in set.file.iter().filter(|f| f.package() == "ax.v1") {
            for service in &file.service {
                for m in &service.method {
                    methods += 1;
                    let input = m.input_type().rsplit('.').next().expect("name");
                    let output = m.output_type().rsplit('.').next().expect("name");
                    assert!(is_inbound_to_server(input), "{}.{}: {input}", service.name(), m.name());
                    assert!(!is_inbound_to_server(output), "{}.{}: {output}", service.name(), m.name());
                }
            }
        }
        assert!(methods > 30, "{methods} methods");
    }

    #[test]
    fn a_request_that_does_not_decode_is_invalid_argument_and_a_response_internal() {
        let status = || Status::internal("failed to decode Protobuf message: invalid varint");
        let request = undecodable(message_name::<crate::v1::CreateTaskRequest>(), status());
        assert_eq!(request.code(), tonic::Code::InvalidArgument);
        assert!(request.message().contains("ax.v1.CreateTaskRequest"), "{}", request.message());
        assert!(request.message().contains("invalid varint"), "{}", request.message());
        let worker = undecodable(message_name::<crate::v1::WorkerMessage>(), status());
        assert_eq!(worker.code(), tonic::Code::InvalidArgument);
        let response = undecodable(message_name::<crate::v1::CreateTaskResponse>(), status());
        assert_eq!(response.code(), tonic::Code::Internal);
        assert_eq!(undecodable(message_name::<crate::v1::SchedulerMessage>(), status()).code(), tonic::Code::Internal);
    }
}
