// Container health check for the runner: the standard grpc.health.v1 Check, sent with the Connect
// protocol (JSON over HTTP/2) so no gRPC tooling is needed in the image. Exit 0 when SERVING.
import http2 from "node:http2";

const port = process.argv[2] ?? "7070";
const session = http2.connect(`http://127.0.0.1:${port}`);
session.on("error", () => process.exit(1));
const request = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/json" });
let body = "";
request.setEncoding("utf8");
request.on("data", (chunk) => (body += chunk));
request.on("end", () => {
  session.close();
  process.exit(body.includes('"SERVING"') ? 0 : 1);
});
request.setTimeout(2000, () => process.exit(1));
request.end("{}");
