// Original file: ax/v1/admin.proto


export interface ListAlertDeliveriesRequest {
  'rule'?: (string);
  'status'?: (string);
  'page_size'?: (number);
  'page_token'?: (string);
}

export interface ListAlertDeliveriesRequest__Output {
  'rule': (string);
  'status': (string);
  'page_size': (number);
  'page_token': (string);
}
