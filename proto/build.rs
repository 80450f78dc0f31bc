//! Compiles `proto/vexil.proto` with protox (pure Rust: no system `protoc`) into tonic + prost code.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed=proto/vexil.proto");
    let descriptors = protox::compile(["vexil.proto"], ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}
