// Original file: ax/v1/admin.proto

export const LinkKind = {
  LINK_KIND_UNSPECIFIED: 'LINK_KIND_UNSPECIFIED',
  LINK_KIND_ON_SUCCESS: 'LINK_KIND_ON_SUCCESS',
  LINK_KIND_ON_FAILURE: 'LINK_KIND_ON_FAILURE',
  LINK_KIND_AFTER_ALL: 'LINK_KIND_AFTER_ALL',
} as const;

export type LinkKind =
  | 'LINK_KIND_UNSPECIFIED'
  | 0
  | 'LINK_KIND_ON_SUCCESS'
  | 1
  | 'LINK_KIND_ON_FAILURE'
  | 2
  | 'LINK_KIND_AFTER_ALL'
  | 3

export type LinkKind__Output = typeof LinkKind[keyof typeof LinkKind]
