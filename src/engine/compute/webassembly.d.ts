// The part of the WebAssembly JS API the compute kernel uses. Node 20 provides it at run time, but
// neither lib ES2022 nor @types/node 20 declares it (only lib.dom does, which the engine must not use).
declare namespace WebAssembly {
  interface Module {}
  var Module: { prototype: Module; new (bytes: Uint8Array): Module };
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  interface Memory {
    readonly buffer: ArrayBuffer | SharedArrayBuffer;
  }
  var Memory: { prototype: Memory; new (descriptor: MemoryDescriptor): Memory };
  /** the kernel's modules export only functions over i32/f32 */
  type ExportValue = (...args: number[]) => void;
  interface Instance {
    readonly exports: Record<string, ExportValue>;
  }
  var Instance: { prototype: Instance; new (module: Module, imports?: Record<string, Record<string, unknown>>): Instance };
  function compile(bytes: Uint8Array): Promise<Module>;
  function validate(bytes: Uint8Array): boolean;
}
