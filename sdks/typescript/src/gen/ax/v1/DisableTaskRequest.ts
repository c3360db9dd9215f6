// Original file: ax/v1/admin.proto


export interface DisableTaskRequest {
  'name'?: (string);
}

export interface DisableTaskRequest__Output {
  'name': (string);
}
