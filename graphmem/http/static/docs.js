// Swagger UI over /openapi.json. Started from this file rather than an inline script, so /docs
// runs under the same CSP as every other page; no validator badge (it would fetch from elsewhere).
"use strict";

SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  presets: [SwaggerUIBundle.presets.apis],
  deepLinking: true,
  validatorUrl: null,
});
