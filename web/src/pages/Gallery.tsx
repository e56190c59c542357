import { api, type ListBody } from '../api';
import { useI18n } from '../i18n';
import { ErrorNote, Loading, Section, useLoad } from '../ui';

interface Image {
  readonly id: string;
  readonly task_id: string | null;
  readonly model: string;
  readonly prompt: string | null;
  readonly url: string;
  readonly created_at: number;
}

export function Gallery() {
  const { t } = useI18n();
  const images = useLoad(() => api.get<ListBody<Image>>('/v1/gallery?limit=60'), []);
  return (
    <>
      <h1>{t('Gallery')}</h1>
      <Section title={t('Generated images')}>
        <ErrorNote error={images.error} />
        {!images.data ? (
          <Loading />
        ) : images.data.data.length === 0 ? (
          <p className="muted">{t('No images yet.')}</p>
        ) : (
          <ul className="gallery">
            {images.data.data.map((image) => (
              <li key={image.id}>
                <a href={image.url} target="_blank" rel="noreferrer">
                  <img src={image.url} alt={image.prompt ?? t('Generated image')} loading="lazy" width={180} height={180} />
                </a>
                <span className="muted">{image.model}</span>
              </li>
            ))}
          </ul>
        )}
      </Section>
    </>
  );
}
