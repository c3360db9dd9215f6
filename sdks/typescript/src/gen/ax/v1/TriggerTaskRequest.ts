// Original file: ax/v1/admin.proto


export interface TriggerTaskRequest {
  'name'?: (string);
  'params'?: (string);
  'idempotency_key'?: (string);
  '_params'?: "params";
}

export interface TriggerTaskRequest__Output {
  'name': (string);
  'params'?: (string);
  'idempotency_key': (string);
  '_params'?: "params";
}
