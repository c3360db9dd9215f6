// The AdminService client of the page: gRPC-Web to the origin that served it (axd's console port),
// so the browser's client certificate, if any, is the caller's identity, exactly as axctl's is.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { AdminService } from "./gen/ax/v1/admin_pb";

export const api = createClient(
  AdminService,
  createGrpcWebTransport({ baseUrl: window.location.origin, useBinaryFormat: true }),
);

/** A failed call as axctl prints it: `Code: message`, e.g. `PermissionDenied: ... needs role operator`. */
export function errorText(e: unknown): string {
  if (e instanceof ConnectError) {
    const name = Code[e.code] ?? String(e.code);
    return e.rawMessage ? `${name}: ${e.rawMessage}` : name;
  }
  return e instanceof Error ? e.message : String(e);
}
